#!/usr/bin/env bash
# Runs a command with MSGCONTRACT_PG_DSN pointing at a throwaway PostgreSQL
# cluster (scripts/pg-start.sh), and stops the cluster afterwards, whatever
# the command's outcome. The command's exit status is returned.
#
#   bash scripts/with-postgres.sh go test ./...
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
dsn=$(bash scripts/pg-start.sh 2>"$log") || { cat "$log" >&2; exit 1; }
stop=$(sed -n 's/^pg-start: stop with: //p' "$log")
# The cluster's dir: bash "$MSGCONTRACT_PG_DIR/kill.sh" stops it as a crash
# does, bash "$MSGCONTRACT_PG_DIR/start.sh" starts it again (same port, same
# data), for runs that restart the database under load. It goes with the
# cluster (tens of MB a run).
MSGCONTRACT_PG_DIR=$(sed -n 's/^pg-start: cluster in \(.*\) on .*/\1/p' "$log")
trap 'eval "$stop" >/dev/null 2>&1 || true; [[ -n "$MSGCONTRACT_PG_DIR" ]] && rm -rf "$MSGCONTRACT_PG_DIR"; rm -f "$log"' EXIT
export MSGCONTRACT_PG_DSN="$dsn" MSGCONTRACT_PG_DIR
"$@"
