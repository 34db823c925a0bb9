#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the runtime-go tests and prints
# its DSN on stdout (everything else goes to stderr):
#
#   export MSGCONTRACT_PG_DSN=$(bash scripts/pg-start.sh)
#
# Installs Debian's postgresql package when no server binaries are found
# (needs root; runs apt-get update first). The cluster lives in a fresh
# temp dir, listens on a free loopback port only, trusts local connections
# and runs with fsync off: it is for tests, never for data. Stop it with
# the command printed on stderr (or let the machine go away).
#
# MSGCONTRACT_PG_DURABLE=1 keeps PostgreSQL's durable defaults (fsync,
# full_page_writes and synchronous_commit on, none set on the command line,
# which ALTER SYSTEM cannot override): msgcontract doctor's test starts
# such a cluster to see it clean, then weakens it with ALTER SYSTEM, and a
# run that crashes the server (make chaos FAULTS=db-restart) needs the
# commits it was told of to survive (the weakened default loses the last
# few, as msgcontract doctor reports).
set -euo pipefail

log() { echo "pg-start: $*" >&2; }

find_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [[ -x "$d/initdb" && -x "$d/pg_ctl" ]]; then echo "$d"; return 0; fi
  done
  if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(command -v initdb)"; return 0
  fi
  return 1
}

if ! bindir=$(find_bindir); then
  log "PostgreSQL not found; installing Debian's postgresql package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update >&2
  apt-get install -y --no-install-recommends postgresql >&2
  bindir=$(find_bindir) || { log "postgresql installed but initdb/pg_ctl not found"; exit 1; }
fi

# PostgreSQL refuses to run as root: use the postgres user (created by the
# package; created here if missing).
run_as=()
if [[ $(id -u) -eq 0 ]]; then
  if ! id postgres >/dev/null 2>&1; then
    useradd --system --home-dir /nonexistent --shell /usr/sbin/nologin postgres
  fi
  run_as=(runuser -u postgres --)
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/msgcontract-pg.XXXXXX")
chmod 755 "$dir"
[[ ${#run_as[@]} -gt 0 ]] && chown postgres "$dir"

port=$(bash "$(dirname "$0")/free-port.sh")
weak="-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
[[ "${MSGCONTRACT_PG_DURABLE:-}" == 1 ]] && weak=""

"${run_as[@]}" "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 \
  || { cat "$dir/initdb.log" >&2; exit 1; }
# start.sh starts the cluster (again: same port, same data) and waits until
# it accepts connections; kill.sh stops it the way a crash does (immediate
# shutdown, WAL recovery on the next start). A run that restarts the
# database under load uses the pair ($MSGCONTRACT_PG_DIR under
# with-postgres.sh).
cat >"$dir/start.sh" <<START
#!/usr/bin/env bash
exec ${run_as[*]} $bindir/pg_ctl -D $dir/data -l $dir/server.log -w -t 60 \\
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 ${weak}-c max_connections=200" \\
  start
START
cat >"$dir/kill.sh" <<KILL
#!/usr/bin/env bash
exec ${run_as[*]} $bindir/pg_ctl -D $dir/data -w -t 60 stop -m immediate
KILL
bash "$dir/start.sh" >&2 || { cat "$dir/server.log" >&2; exit 1; }

log "cluster in $dir on 127.0.0.1:$port"
log "stop with: bash $dir/kill.sh"
echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
