#!/usr/bin/env bash
# Runs a command with MSGCONTRACT_KAFKA_BROKERS pointing at a throwaway
# Apache Kafka broker (scripts/kafka-start.sh), and stops the broker
# afterwards, whatever the command's outcome. MSGCONTRACT_KAFKA_DIR is the
# broker's dir and MSGCONTRACT_KAFKA_START the start script, for a run that
# restarts it (kafka-start.sh DIR). The
# command's exit status is returned. When the command fails, the broker's
# warnings and errors (the last 40) go to stderr, so a failure in CI can be
# told apart from a broker that stalled.
#
#   bash scripts/with-kafka.sh go test ./transport/kafka
#
# Inside another with-kafka.sh (MSGCONTRACT_KAFKA_BROKERS and the broker's
# dir already set) it runs the command on that broker: make test runs its
# Kafka suites on one broker (make test-kafka-all), sparing a start and a
# stop each. Every suite keeps to topics and groups under a namespace of
# its own, so none sees another's records.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${MSGCONTRACT_KAFKA_BROKERS:-}" && -d "${MSGCONTRACT_KAFKA_DIR:-}" ]]; then
  echo "with-kafka: on the broker already running at ${MSGCONTRACT_KAFKA_DIR} (${MSGCONTRACT_KAFKA_BROKERS})" >&2
  exec "$@"
fi
log=$(mktemp)
brokers=$(bash scripts/kafka-start.sh 2>"$log") || { cat "$log" >&2; exit 1; }
dir=$(sed -n 's/^kafka-start: broker pid [0-9]* in \(.*\) on .*/\1/p' "$log")
trap 'p=$(cat "$dir/pid" 2>/dev/null) && { kill "$p"; while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; } >/dev/null 2>&1; rm -rf "$dir" "$log"' EXIT
export MSGCONTRACT_KAFKA_BROKERS="$brokers" MSGCONTRACT_KAFKA_DIR="$dir" MSGCONTRACT_KAFKA_START="$PWD/scripts/kafka-start.sh"
rc=0
"$@" || rc=$?
if [[ $rc -ne 0 && -f "$dir/server.log" ]]; then
  echo "with-kafka: the command failed (exit $rc); the broker's last warnings and errors:" >&2
  grep -E ' (WARN|ERROR) ' "$dir/server.log" | tail -40 >&2 || echo "with-kafka: none" >&2
fi
exit $rc
