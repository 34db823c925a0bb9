#!/usr/bin/env bash
# Starts a throwaway RabbitMQ node (Debian's rabbitmq-server) for the
# RabbitMQ tests and prints its AMQP URL on stdout (everything else goes to
# stderr):
#
#   export MSGCONTRACT_TEST_RABBITMQ=$(bash scripts/rabbitmq-start.sh)
#
# The node has its own name (msgcontract-test-<port>@localhost), keeps its
# data, logs and Erlang cookie in a fresh temp dir, and listens on free
# loopback ports only: AMQP, the Erlang distribution port and an epmd of
# its own (ERL_EPMD_PORT), so it never meets the system's node or another
# test node. No plugin is enabled. It is for tests, never for data. The
# URL uses guest, which RabbitMQ lets in from loopback only.
#
# Stop it with the command printed on stderr (scripts/with-rabbitmq.sh
# does): it stops the node, then its epmd, and leaves nothing running.
# Given the dir of an earlier run (`rabbitmq-start.sh DIR`) it starts that
# node again on the same ports and data, for a run that restarts the broker
# (kill it with the beam pid in DIR/node.pid, or DIR/pid for a clean stop).
#
# Installs Debian's rabbitmq-server package when it is missing (needs root;
# scripts/setup.sh does it without leaving the system service running).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "rabbitmq-start: $*" >&2; }

server=/usr/lib/rabbitmq/bin/rabbitmq-server
if [[ ! -x "$server" ]]; then
  log "rabbitmq-server not found; installing Debian's package (scripts/setup.sh)"
  bash scripts/setup.sh >&2
fi
[[ -x "$server" ]] || { log "$server is missing after setup; install Debian's rabbitmq-server"; exit 1; }
command -v epmd >/dev/null || { log "epmd not found (Debian's erlang-base); install rabbitmq-server"; exit 1; }

if [[ $# -gt 0 ]]; then
  dir=$1
  [[ -f "$dir/ports" ]] || { log "$dir has no ports file: not a rabbitmq-start dir"; exit 1; }
  read -r port dist epmd_port <"$dir/ports"
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/msgcontract-rabbitmq.XXXXXX")
  declare -A taken=()
  # pick runs in a subshell: the caller records what it took.
  pick() {
    local p
    p=$(bash scripts/free-port.sh)
    while [[ -n "${taken[$p]:-}" ]]; do p=$(bash scripts/free-port.sh); done
    echo "$p"
  }
  port=$(pick); taken[$port]=1
  dist=$(pick); taken[$dist]=1
  epmd_port=$(pick)
  echo "$port $dist $epmd_port" >"$dir/ports"
  mkdir -p "$dir/home" "$dir/mnesia" "$dir/log"
  # Every test declares a dozen quorum queues under its own prefix: a full
  # make test-rabbitmq holds some 700, more than 512 MiB, and a memory
  # alarm blocks every publisher.
  cat >"$dir/rabbitmq.conf" <<CONF
listeners.tcp.1 = 127.0.0.1:$port
loopback_users.guest = true
log.console = false
log.file.level = info
vm_memory_high_watermark.absolute = 2GiB
disk_free_limit.absolute = 50MB
CONF
  echo "[]." >"$dir/enabled_plugins"
  # Quorum queues dead-letter at least once through a worker that keeps
  # 32 messages in flight by default: a burst of expiring retries then
  # waits in line. And a copy the worker could not forward (its exchange
  # or target queue not yet back after a restart) waits for the worker's
  # next try, 180 s by default. docs/rabbitmq.md ("Broker settings")
  # recommends both for production.
  echo "[{rabbit, [{dead_letter_worker_consumer_prefetch, 1024}, {dead_letter_worker_publisher_confirm_timeout, 5000}]}]." >"$dir/advanced.config"
  : >"$dir/rabbitmq-env.conf"
  # The cookie: rabbitmqctl and the node read it from HOME.
  head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/home/.erlang.cookie"
  chmod 400 "$dir/home/.erlang.cookie"
fi
node="msgcontract-test-$port@localhost"

export HOME="$dir/home" \
  RABBITMQ_NODENAME="$node" RABBITMQ_USE_LONGNAME=false \
  RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$port" RABBITMQ_DIST_PORT="$dist" \
  ERL_EPMD_PORT="$epmd_port" ERL_EPMD_ADDRESS=127.0.0.1 \
  RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf" RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" \
  RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config" \
  RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" RABBITMQ_ENABLED_PLUGINS="" \
  RABBITMQ_MNESIA_BASE="$dir/mnesia" RABBITMQ_LOG_BASE="$dir/log" RABBITMQ_PID_FILE="$dir/node.pid" \
  RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}"

# Its own epmd, in the foreground of a background job so its pid is known;
# a restart (rabbitmq-start.sh DIR) keeps the one still running.
if [[ -f "$dir/epmd.pid" ]] && kill -0 "$(cat "$dir/epmd.pid")" 2>/dev/null; then
  epmd_pid=$(cat "$dir/epmd.pid")
else
  epmd -port "$epmd_port" -address 127.0.0.1 >>"$dir/log/epmd.log" 2>&1 </dev/null &
  epmd_pid=$!
  echo "$epmd_pid" >"$dir/epmd.pid"
fi

"$server" >>"$dir/log/server.out" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$dir/pid"
started=0
stop="kill $pid 2>/dev/null; while kill -0 $pid 2>/dev/null; do sleep 0.1; done; kill $epmd_pid 2>/dev/null; while kill -0 $epmd_pid 2>/dev/null; do sleep 0.1; done"
# A node that did not come up is not left behind.
trap '[[ $started == 1 ]] || eval "$stop" >/dev/null 2>&1 || true' EXIT

# Serving: the AMQP 0-9-1 protocol header gets a Connection.Start frame
# (frame type 1) back.
amqp_ready() {
  local b
  b=$(timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && printf 'AMQP\x00\x00\x09\x01' >&3 && head -c1 <&3 | od -An -tu1" 2>/dev/null) || return 1
  [[ "$(echo $b)" == 1 ]]
}
for _ in $(seq 1200); do
  if ! kill -0 "$pid" 2>/dev/null; then
    tail -30 "$dir/log/server.out" >&2
    tail -30 "$dir/log/$node.log" >&2 2>/dev/null || true
    log "the node exited during start"
    exit 1
  fi
  if amqp_ready; then
    started=1
    log "node $node pid $pid (epmd pid $epmd_pid on $epmd_port, dist $dist) in $dir on 127.0.0.1:$port"
    log "stop with: $stop"
    echo "amqp://guest:guest@127.0.0.1:$port/"
    exit 0
  fi
  sleep 0.1
done
tail -30 "$dir/log/server.out" >&2
log "the node did not accept AMQP within 120s"
exit 1
