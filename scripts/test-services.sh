#!/usr/bin/env bash
# Builds and runs each standalone project under examples/services/<lang> the
# way a new user would: copied to a directory outside this repository, with
# only the commands docs/services.md documents for it (the ```sh block after
# "<!-- steps:<lang> -->"), msgcontract's bin/ on PATH and MSGCONTRACT set to
# this checkout. A step missing from those docs fails here. The services
# hold no copy of the example contract: their steps read examples/proto
# through MSGCONTRACT.
# Needs `make build runtime-java runtime-python` first (make services does it),
# and for spring the starter in ~/.m2 and a Kafka broker at
# MSGCONTRACT_KAFKA_BROKERS (make services runs it under scripts/with-kafka.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
# The document whose <!-- steps:<lang> --> blocks are the steps.
steps_doc=docs/services.md
langs=("$@")
((${#langs[@]})) || langs=(go java spring python)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for lang in "${langs[@]}"; do
  if [[ $lang == spring && -z "${MSGCONTRACT_KAFKA_BROKERS:-}" ]]; then
    echo "services: spring needs a Kafka broker at MSGCONTRACT_KAFKA_BROKERS: run it through scripts/with-kafka.sh (make services)" >&2
    exit 1
  fi
  steps="$(awk -v m="<!-- steps:$lang -->" '
    $0 == m { armed = 1; next }
    armed && /^```sh$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }' "$steps_doc")"
  if [[ -z "$steps" ]]; then
    echo "services: $steps_doc has no <!-- steps:$lang --> block" >&2
    exit 1
  fi
  cp -r "examples/services/$lang" "$work/$lang"
  echo "services: $lang: running the steps of $steps_doc in a copy outside the repository"
  if ! (cd "$work/$lang" && env -u GOFLAGS MSGCONTRACT="$root" PATH="$root/bin:$PATH" \
    bash -euo pipefail -c "$steps") >"$work/$lang.log" 2>&1; then
    cat "$work/$lang.log" >&2
    echo "services: $lang failed" >&2
    exit 1
  fi
  echo "services-$lang: $(grep -E '^payments recorded' "$work/$lang.log")"
  # A variant of an example (python's asyncio one) prints "<variant>: payments recorded ...".
  sed -nE "s/^([a-z]+): (payments recorded.*)/services-$lang-\1: \2/p" "$work/$lang.log"
done
