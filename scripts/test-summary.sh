#!/usr/bin/env bash
# Prints the summary line of every suite `make test` runs, in a fixed
# order, from the files the suites wrote under DIR (testsummary -dir and
# the conformance target). A suite without a line did not report: that
# fails the run, so a suite that silently stopped running is noticed.
set -euo pipefail
dir="${1:?usage: test-summary.sh DIR}"
missing=0
echo "==> summary"
for suite in go runtime-go kafka kafka-python java-kafka spring demo-kafka demo-rabbitmq demo-rocketmq mysql obs trace corpus registry-security rabbitmq rabbitmq-retry-delays java-rabbitmq java-rabbitmq-retry-delays rabbitmq-python python-rabbitmq-retry-delays rocketmq rocketmq-retry-delays java-rocketmq java-rocketmq-retry-delays rocketmq-python rocketmq-python-delays python-rocketmq-retry-delays python-rocketmq-retry-delays-ready java python java-runtime python-runtime python-range services conformance; do
  if [[ -s "$dir/$suite.txt" ]]; then
    cat "$dir/$suite.txt"
  else
    echo "$suite: no result (the suite did not run or did not report)"
    missing=1
  fi
done
exit "$missing"
