#!/usr/bin/env bash
# Runs a command with MSGCONTRACT_TEST_RABBITMQ set to the AMQP URL of a
# throwaway RabbitMQ node (scripts/rabbitmq-start.sh), and stops the node
# and its epmd afterwards, whatever the command's outcome: nothing is left
# running. MSGCONTRACT_RABBITMQ_DIR is the node's dir and
# MSGCONTRACT_RABBITMQ_START the start script, for a run that restarts it
# (rabbitmq-start.sh DIR). The command's exit status is returned. When the
# command fails, the node's last warnings and errors (40) go to stderr.
#
#   bash scripts/with-rabbitmq.sh go test -tags rabbitmq ./transport/rabbitmq
#
# Inside another with-rabbitmq.sh (MSGCONTRACT_TEST_RABBITMQ and the node's
# dir already set) it runs the command on that node: make test runs its
# RabbitMQ suites on one node (make test-rabbitmq-all), sparing a start and
# a stop each.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${MSGCONTRACT_TEST_RABBITMQ:-}" && -d "${MSGCONTRACT_RABBITMQ_DIR:-}" ]]; then
  echo "with-rabbitmq: on the node already running at ${MSGCONTRACT_RABBITMQ_DIR}" >&2
  exec "$@"
fi
log=$(mktemp)
url=$(bash scripts/rabbitmq-start.sh 2>"$log") || { cat "$log" >&2; rm -f "$log"; exit 1; }
dir=$(sed -n 's/^rabbitmq-start: node .* in \(.*\) on 127.0.0.1:[0-9]*$/\1/p' "$log")
stop=$(sed -n 's/^rabbitmq-start: stop with: //p' "$log")
# The node may have been restarted under new pids (rabbitmq-start.sh DIR):
# stop whatever the dir's pid files name, then the pids first started.
trap 'for f in pid epmd.pid; do p=$(cat "$dir/$f" 2>/dev/null) && { kill "$p"; while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; }; done >/dev/null 2>&1; eval "$stop" >/dev/null 2>&1 || true; rm -rf "$dir" "$log"' EXIT
trap 'exit 130' INT TERM
export MSGCONTRACT_TEST_RABBITMQ="$url" MSGCONTRACT_RABBITMQ_DIR="$dir" MSGCONTRACT_RABBITMQ_START="$PWD/scripts/rabbitmq-start.sh"
rc=0
"$@" || rc=$?
if [[ $rc -ne 0 ]]; then
  echo "with-rabbitmq: the command failed (exit $rc); the node's last warnings and errors:" >&2
  grep -hE '\[(warning|error)\]' "$dir"/log/*.log 2>/dev/null | tail -40 >&2 || echo "with-rabbitmq: none" >&2
fi
exit $rc
