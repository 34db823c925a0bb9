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
trap 'eval "$stop" >/dev/null 2>&1 || true; rm -f "$log"' EXIT
export MSGCONTRACT_PG_DSN="$dsn"
"$@"
