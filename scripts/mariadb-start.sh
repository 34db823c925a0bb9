#!/usr/bin/env bash
# Starts a throwaway MariaDB server for the MySQL tests and prints its DSN,
# a mysql://user:password@127.0.0.1:PORT/mysql URL that runtime-go's
# mysqldb.Open, the Java test and the Python test all read, on stdout;
# everything else goes to stderr:
#
#   export MSGCONTRACT_MYSQL_DSN=$(bash scripts/mariadb-start.sh)
#
# Installs Debian's mariadb-server package when no server binary is found
# (needs root; runs apt-get update first). The server keeps its data in a
# fresh temp dir, listens on a free loopback port only, runs as the
# current user (mariadbd --user=root when that is root), and flushes the
# redo log lazily: it is for tests, never for data. Stop it with the
# command printed on stderr (scripts/with-mariadb.sh does).
set -euo pipefail

log() { echo "mariadb-start: $*" >&2; }

find_server() {
  local b
  for b in mariadbd mysqld; do
    if command -v "$b" >/dev/null; then command -v "$b"; return 0; fi
    if [[ -x "/usr/sbin/$b" ]]; then echo "/usr/sbin/$b"; return 0; fi
  done
  return 1
}

if ! server=$(find_server) || ! command -v mariadb-install-db >/dev/null; then
  log "MariaDB not found; installing Debian's mariadb-server package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >&2
  apt-get install -y --no-install-recommends mariadb-server >&2
  server=$(find_server) || { log "mariadb-server installed but no mariadbd found"; exit 1; }
fi

port=$(bash "$(dirname "$0")/free-port.sh")
dir=$(mktemp -d "${TMPDIR:-/tmp}/msgcontract-mariadb.XXXXXX")
user=$(id -un)

opts=(--no-defaults --datadir="$dir/data" --socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid"
  --user="$user" --innodb-buffer-pool-size=64M --innodb-log-file-size=16M)

mariadb-install-db "${opts[@]}" --auth-root-authentication-method=normal --skip-test-db \
  >"$dir/install.log" 2>&1 || { cat "$dir/install.log" >&2; exit 1; }

# A run that crashes the server (make chaos FAULTS=db-restart) needs the
# commits it was told of to survive the process: MSGCONTRACT_MARIADB_FLUSH=2
# writes the redo log to the OS at each commit (the default, 0, writes it
# once a second and loses up to a second of commits on a crash, as
# msgcontract doctor reports).
flush=${MSGCONTRACT_MARIADB_FLUSH:-0}
[[ $flush == 0 || $flush == 1 || $flush == 2 ]] || { log "MSGCONTRACT_MARIADB_FLUSH=$flush: want 0, 1 or 2"; exit 2; }

# start.sh starts the server (again: same port, same data) and waits until
# it answers; kill.sh SIGKILLs it, as a crash would, and waits until it has
# gone. A run that restarts the database under load uses the pair
# ($MSGCONTRACT_MYSQL_DIR under with-mariadb.sh).
cat >"$dir/start.sh" <<START
#!/usr/bin/env bash
set -euo pipefail
$server ${opts[*]} --port=$port --bind-address=127.0.0.1 --log-error=$dir/server.log \\
  --skip-log-bin --innodb-flush-log-at-trx-commit=$flush --innodb-doublewrite=0 --max-connections=500 \\
  --character-set-server=utf8mb4 --collation-server=utf8mb4_unicode_ci </dev/null >/dev/null 2>&1 &
pid=\$!
for _ in \$(seq 600); do
  if mariadb --no-defaults --socket=$dir/mysqld.sock -uroot -e 'SELECT 1' >/dev/null 2>&1; then exit 0; fi
  if ! kill -0 \$pid 2>/dev/null; then cat $dir/server.log >&2; echo "mariadb: server exited" >&2; exit 1; fi
  sleep 0.1
done
echo "mariadb: not ready after 60 s" >&2
kill \$pid
exit 1
START
cat >"$dir/kill.sh" <<KILL
#!/usr/bin/env bash
pid=\$(cat $dir/mysqld.pid 2>/dev/null) || exit 0
kill -9 \$pid 2>/dev/null || true
while kill -0 \$pid 2>/dev/null; do sleep 0.05; done
KILL
bash "$dir/start.sh" || exit 1
pid=$(cat "$dir/mysqld.pid")
started=0
# A server that did not come up ready is not left behind.
trap '[[ $started == 1 ]] || { kill "$pid" 2>/dev/null || true; }' EXIT

# A user for TCP from loopback, allowed to create a database per test.
mariadb --no-defaults --socket="$dir/mysqld.sock" -uroot -e "
  CREATE USER 'msgcontract'@'127.0.0.1' IDENTIFIED BY 'msgcontract';
  GRANT ALL PRIVILEGES ON *.* TO 'msgcontract'@'127.0.0.1' WITH GRANT OPTION;" >&2 \
  || { cat "$dir/server.log" >&2; exit 1; }

started=1
log "server in $dir on 127.0.0.1:$port (pid $pid)"
log "stop with: pid=\$(cat $dir/mysqld.pid); kill \$pid; while kill -0 \$pid 2>/dev/null; do sleep 0.1; done; rm -rf $dir"
echo "mysql://msgcontract:msgcontract@127.0.0.1:$port/mysql"
