#!/usr/bin/env bash
# Starts a throwaway single-node Apache Kafka broker (KRaft, combined
# broker and controller) for runtime-go's Kafka tests and prints its
# bootstrap address on stdout (everything else goes to stderr):
#
#   export MSGCONTRACT_KAFKA_BROKERS=$(bash scripts/kafka-start.sh)
#
# The jars come from scripts/kafka-setup.sh (Maven Central, cached). The
# broker lives in a fresh temp dir, listens on free loopback ports only,
# creates no topic by itself (auto.create.topics.enable=false) and runs
# with -Xmx512m: it is for tests, never for data. Stop it with the command
# printed on stderr. Given the dir of an earlier run (`kafka-start.sh DIR`)
# it starts that broker again on the same ports and data: the chaos run
# restarts the broker that way.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "kafka-start: $*" >&2; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

lib=$(bash scripts/kafka-setup.sh)
command -v java >/dev/null || { log "java not found; install a JDK 17+"; exit 1; }

if [[ $# -gt 0 ]]; then
  dir=$1
  [[ -f "$dir/server.properties" ]] || { log "$dir has no server.properties: not a kafka-start dir"; exit 1; }
  port=$(sed -n 's/^advertised.listeners=PLAINTEXT:\/\/127.0.0.1://p' "$dir/server.properties")
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/msgcontract-kafka.XXXXXX")
  port=$(free_port)
  cport=$(free_port)
  while [[ "$cport" == "$port" ]]; do cport=$(free_port); done
  cat >"$dir/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
group.consumer.min.session.timeout.ms=1000
group.consumer.session.timeout.ms=6000
group.consumer.min.heartbeat.interval.ms=500
group.consumer.heartbeat.interval.ms=500
group.min.session.timeout.ms=1000
log.flush.interval.messages=9223372036854775807
PROPS
  # A KRaft cluster id: 16 random bytes, URL-safe base64 without padding. It may
  # start with "-": passed as --cluster-id=ID so it is not read as an option.
  cluster=$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  java -Xmx256m -cp "$lib/*" kafka.tools.StorageTool format --cluster-id="$cluster" \
    -c "$dir/server.properties" >"$dir/format.log" 2>&1 || { cat "$dir/format.log" >&2; rm -rf "$dir"; exit 1; }
fi

java -Xms256m -Xmx512m -XX:+UseSerialGC -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
  -cp "$lib/*" kafka.Kafka "$dir/server.properties" >>"$dir/server.log" 2>&1 </dev/null &
pid=$!
echo "$pid" >"$dir/pid"
# Serving: the broker logs its start and accepts connections.
for _ in $(seq 1200); do
  if ! kill -0 "$pid" 2>/dev/null; then tail -50 "$dir/server.log" >&2; log "the broker exited during start"; exit 1; fi
  if grep -q "Kafka Server started" "$dir/server.log" 2>/dev/null && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    log "broker pid $pid in $dir on 127.0.0.1:$port"
    log "stop with: kill $pid; while kill -0 $pid 2>/dev/null; do sleep 0.1; done"
    echo "127.0.0.1:$port"
    exit 0
  fi
  sleep 0.1
done
kill -9 "$pid" 2>/dev/null || true
tail -50 "$dir/server.log" >&2
log "the broker did not serve within 120s"
exit 1
