#!/usr/bin/env bash
# Runs a command against a throwaway Apache RocketMQ (scripts/rocketmq-start.sh)
# and stops it afterwards, whatever the command's outcome. It exports
# MSGCONTRACT_ROCKETMQ_NAMESRV (the name server, for runtime-go's client),
# MSGCONTRACT_ROCKETMQ_BROKER (the broker, where runtime-go creates topics),
# MSGCONTRACT_ROCKETMQ_PROXY (the gRPC proxy the 5.x Java and Python clients
# use), MSGCONTRACT_ROCKETMQ_DIR (its dir) and MSGCONTRACT_ROCKETMQ_START
# (the start script, for a run that restarts the broker:
# rocketmq-start.sh DIR). The command's exit status is returned; when it
# fails, the broker's last warnings and errors go to stderr.
#
#   bash scripts/with-rocketmq.sh go test -tags rocketmq ./transport/rocketmq
#
# Inside another with-rocketmq.sh it runs the command on that broker.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${MSGCONTRACT_ROCKETMQ_NAMESRV:-}" && -d "${MSGCONTRACT_ROCKETMQ_DIR:-}" ]]; then
  echo "with-rocketmq: on the RocketMQ already running at ${MSGCONTRACT_ROCKETMQ_DIR}" >&2
  exec "$@"
fi
log=$(mktemp)
out=$(bash scripts/rocketmq-start.sh 2>"$log") || { cat "$log" >&2; rm -f "$log"; exit 1; }
read -r namesrv broker proxy <<<"$out"
dir=$(sed -n 's/^rocketmq-start: name server pid .* in \(.*\)$/\1/p' "$log")
trap 'bash "$dir/stop.sh" >/dev/null 2>&1; rm -rf "$dir" "$log"' EXIT
export MSGCONTRACT_ROCKETMQ_NAMESRV="$namesrv" MSGCONTRACT_ROCKETMQ_BROKER="$broker" MSGCONTRACT_ROCKETMQ_PROXY="$proxy" \
  MSGCONTRACT_ROCKETMQ_DIR="$dir" MSGCONTRACT_ROCKETMQ_START="$PWD/scripts/rocketmq-start.sh"
rc=0
"$@" || rc=$?
if [[ $rc -ne 0 ]]; then
  echo "with-rocketmq: the command failed (exit $rc); the broker's last warnings and errors:" >&2
  grep -hE ' (WARN|ERROR) ' "$dir"/home/logs/rocketmqlogs/broker.log 2>/dev/null | tail -40 >&2 || echo "with-rocketmq: none" >&2
fi
exit $rc
