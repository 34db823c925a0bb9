#!/usr/bin/env bash
# Runs a command with MSGCONTRACT_MYSQL_DSN pointing at a throwaway MariaDB
# server (scripts/mariadb-start.sh), and stops the server afterwards,
# whatever the command's outcome. The command's exit status is returned.
#
#   bash scripts/with-mariadb.sh go test -tags mysql ./...
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
dsn=$(bash scripts/mariadb-start.sh 2>"$log") || { cat "$log" >&2; exit 1; }
stop=$(sed -n 's/^mariadb-start: stop with: //p' "$log")
trap 'eval "$stop" >/dev/null 2>&1 || true; rm -f "$log"' EXIT
trap 'exit 130' INT TERM
export MSGCONTRACT_MYSQL_DSN="$dsn"
# The server's dir: bash "$MSGCONTRACT_MYSQL_DIR/kill.sh" SIGKILLs it, bash
# "$MSGCONTRACT_MYSQL_DIR/start.sh" starts it again (same port, same data),
# for runs that restart the database under load.
MSGCONTRACT_MYSQL_DIR=$(sed -n 's/^mariadb-start: server in \(.*\) on .*/\1/p' "$log")
export MSGCONTRACT_MYSQL_DIR
"$@"
