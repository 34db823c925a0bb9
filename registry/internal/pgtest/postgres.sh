#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL server on 127.0.0.1 for the
# registry's PostgreSQL tests (Debian's postgresql package).
#
#   eval "$(registry/internal/pgtest/postgres.sh start)"   # exports MSGCONTRACT_TEST_POSTGRES
#   go test ./registry/...
#   registry/internal/pgtest/postgres.sh stop
#
# PGTEST_DIR (default /tmp/msgcontract-pgtest) holds the cluster; PGTEST_PORT
# (default 55432) is its port. As root, the server runs as the postgres user.
set -euo pipefail
dir="${PGTEST_DIR:-/tmp/msgcontract-pgtest}"
port="${PGTEST_PORT:-55432}"
bin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
if [ -z "$bin" ]; then
  echo "postgres.sh: no PostgreSQL under /usr/lib/postgresql; apt-get install postgresql" >&2
  exit 2
fi
as_pg() {
  if [ "$(id -u)" = 0 ]; then su postgres -c "$*"; else sh -c "$*"; fi
}
case "${1:-}" in
start)
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_pg "$bin/initdb -D $dir/data -A trust -U postgres" >"$dir/initdb.log" 2>&1
  fi
  if ! as_pg "$bin/pg_ctl -D $dir/data status" >/dev/null 2>&1; then
    as_pg "$bin/pg_ctl -D $dir/data -l $dir/server.log -w -o '-p $port -k $dir -c listen_addresses=127.0.0.1' start" >&2
  fi
  echo "export MSGCONTRACT_TEST_POSTGRES='postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable'"
  ;;
stop)
  as_pg "$bin/pg_ctl -D $dir/data -m fast -w stop" >&2 || true
  ;;
*)
  echo "usage: $0 start|stop" >&2
  exit 2
  ;;
esac
