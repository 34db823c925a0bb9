#!/usr/bin/env bash
# Usage: heartbeat.sh LABEL CMD [ARG]...
# Runs CMD and, while it runs, prints "LABEL: still running (45s)" to stderr
# every HEARTBEAT_SECONDS (default 15), so a step that is quiet for minutes
# (a Maven build logging to a file, a cold go build) still shows it is alive;
# stderr, so that a caller capturing stdout does not swallow it.
# Exits with CMD's status; Ctrl-C or TERM stops CMD too.
set -uo pipefail
if (($# < 2)); then
  echo "usage: heartbeat.sh LABEL CMD [ARG]..." >&2
  exit 2
fi
label=$1
shift
interval=${HEARTBEAT_SECONDS:-15}
"$@" &
pid=$!
trap 'kill "$pid" 2>/dev/null' INT TERM
start=$(date +%s)
next=$((start + interval))
while kill -0 "$pid" 2>/dev/null; do
  sleep 1
  now=$(date +%s)
  if ((now >= next)) && kill -0 "$pid" 2>/dev/null; then
    echo "$label: still running ($((now - start))s)" >&2
    next=$((now + interval))
  fi
done
wait "$pid"
