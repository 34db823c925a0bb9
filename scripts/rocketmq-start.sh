#!/usr/bin/env bash
# Starts a throwaway Apache RocketMQ 5.x on loopback -- a name server, and
# the gRPC proxy in Local mode with the broker inside its JVM -- and prints
# "<name server address> <proxy endpoint>" on stdout (everything else goes
# to stderr):
#
#   read -r namesrv proxy < <(bash scripts/rocketmq-start.sh)
#
# runtime-go's client (the remoting protocol) talks to the name server and
# the broker; the 5.x Java and Python clients talk gRPC to the proxy. The
# jars come from scripts/rocketmq-setup.sh (Maven Central, cached). It all
# lives in a fresh temp dir, on free ports: heaps are capped (name server
# 128 MiB, broker and proxy 512 MiB; the stock scripts ask for gigabytes),
# commit-log files are 64 MiB, no topic is created by a producer
# (autoCreateTopicEnable=false: the transport creates its topics), the
# timer wheel -- RocketMQ 5's arbitrary-delay messages -- ticks every 10 ms,
# a pull may return up to 1,024 messages (the default, 32, caps a
# consumer's batch), and the proxy long-polls an empty topic for 1 s at
# least, not 5 s (a 5.x consumer's close waits for its receive: the Java
# and Python suites close hundreds), and a transactional (half) message
# without a verdict is checked back after 2 s and then every 2 s, not 6 s
# and 30 s (the suites wait for check-backs), with the verdicts written
# every 500 ms instead of 3 s (a check-back must come later than that, or
# it finds a committed message unresolved and commits it again).
# Stop it with "$DIR/stop.sh". Given the dir of an earlier run
# (`rocketmq-start.sh DIR`) it starts what of it is not running again, on
# the same ports and data: the chaos run restarts the broker that way.
#
# The proxy's ports and the broker's HA port listen on every interface:
# 5.3 has no setting to bind them to one address. The name server and the
# broker's client ports bind 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "rocketmq-start: $*" >&2; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

lib=$(bash scripts/rocketmq-setup.sh)
command -v java >/dev/null || { log "java not found; install a JDK 17+"; exit 1; }

if [[ $# -gt 0 ]]; then
  dir=$1
  [[ -f "$dir/broker.conf" ]] || { log "$dir has no broker.conf: not a rocketmq-start dir"; exit 1; }
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/msgcontract-rocketmq.XXXXXX")
  used=" "
  pick() { local p; p=$(free_port); while [[ "$used" == *" $p "* ]]; do p=$(free_port); done; used="$used$p "; echo "$p"; }
  ns=$(pick); bp=$(pick); ha=$(pick); grpc=$(pick); rem=$(pick)
  mkdir -p "$dir/home" "$dir/store"
  cat >"$dir/namesrv.conf" <<CONF
listenPort=$ns
bindAddress=127.0.0.1
CONF
  cat >"$dir/broker.conf" <<CONF
brokerClusterName=msgcontract
brokerName=broker-a
brokerId=0
brokerIP1=127.0.0.1
bindAddress=127.0.0.1
listenPort=$bp
haListenPort=$ha
namesrvAddr=127.0.0.1:$ns
storePathRootDir=$dir/store
storePathCommitLog=$dir/store/commitlog
autoCreateTopicEnable=false
autoCreateSubscriptionGroup=true
timerWheelEnable=true
timerPrecisionMs=10
mappedFileSizeCommitLog=67108864
mappedFileSizeConsumeQueue=600000
mappedFileSizeTimerLog=16777216
diskMaxUsedSpaceRatio=95
maxTransferCountOnMessageInMemory=1024
transactionTimeOut=2000
transactionCheckInterval=2000
transactionOpBatchInterval=500
CONF
  cat >"$dir/proxy.json" <<CONF
{"rocketMQClusterName": "msgcontract", "namesrvAddr": "127.0.0.1:$ns",
 "grpcServerPort": $grpc, "remotingListenPort": $rem,
 "grpcClientConsumerMinLongPollingTimeoutMillis": 1000}
CONF
fi
ns=$(sed -n 's/^listenPort=//p' "$dir/namesrv.conf")
bp=$(sed -n 's/^listenPort=//p' "$dir/broker.conf")
grpc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["grpcServerPort"])' "$dir/proxy.json")

cat >"$dir/stop.sh" <<STOP
#!/usr/bin/env bash
# Stops the RocketMQ of $dir (SIGKILL: its data is throwaway).
for f in "$dir/broker.pid" "$dir/namesrv.pid"; do
  p=\$(cat "\$f" 2>/dev/null) || continue
  kill -9 "\$p" 2>/dev/null || true
  while kill -0 "\$p" 2>/dev/null; do sleep 0.1; done
done
STOP
chmod +x "$dir/stop.sh"

export ROCKETMQ_HOME="$dir/home"
jvm=(-XX:+UseSerialGC -Duser.home="$dir/home" -Drocketmq.home.dir="$dir/home" -cp "$lib/*")
alive() { local p; p=$(cat "$dir/$1.pid" 2>/dev/null) && kill -0 "$p" 2>/dev/null; }
serving() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() { # name pid port what-in-log log
  for _ in $(seq 1200); do
    if ! kill -0 "$2" 2>/dev/null; then tail -40 "$5" >&2; log "the $1 exited during start"; exit 1; fi
    if grep -q "$4" "$5" 2>/dev/null && serving "$3"; then return 0; fi
    sleep 0.1
  done
  kill -9 "$2" 2>/dev/null || true
  tail -40 "$5" >&2
  log "the $1 did not serve within 120s"
  exit 1
}

if ! alive namesrv; then
  : >"$dir/namesrv.log"
  java -Xms64m -Xmx128m "${jvm[@]}" org.apache.rocketmq.namesrv.NamesrvStartup -c "$dir/namesrv.conf" \
    >>"$dir/namesrv.log" 2>&1 </dev/null &
  echo $! >"$dir/namesrv.pid"
  wait_for "name server" "$(cat "$dir/namesrv.pid")" "$ns" "boot success" "$dir/namesrv.log"
fi
if ! alive broker; then
  : >"$dir/broker.log"
  java -Xms256m -Xmx512m "${jvm[@]}" org.apache.rocketmq.proxy.ProxyStartup -pm Local \
    -bc "$dir/broker.conf" -pc "$dir/proxy.json" >>"$dir/broker.log" 2>&1 </dev/null &
  echo $! >"$dir/broker.pid"
  wait_for "broker" "$(cat "$dir/broker.pid")" "$grpc" "startup successfully" "$dir/broker.log"
  for _ in $(seq 300); do serving "$bp" && break; sleep 0.1; done
fi
log "name server pid $(cat "$dir/namesrv.pid") on 127.0.0.1:$ns, broker and proxy pid $(cat "$dir/broker.pid") (broker 127.0.0.1:$bp, proxy 127.0.0.1:$grpc) in $dir"
log "stop with: $dir/stop.sh"
echo "127.0.0.1:$ns 127.0.0.1:$bp 127.0.0.1:$grpc"
