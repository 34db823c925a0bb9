#!/usr/bin/env bash
# Starts a throwaway Jaeger (v1.75.0's `jaeger` binary: the OpenTelemetry
# Collector based all-in-one) for the tracing test and `make demo TRACE=1`,
# and prints two lines on stdout (everything else goes to stderr):
#
#   otlp=http://127.0.0.1:PORT     OTLP/HTTP receiver (append /v1/traces)
#   query=http://127.0.0.1:PORT    the query HTTP API (/api/traces, /api/services)
#
# The binary comes from scripts/install-jaeger.sh (built once into
# ${XDG_CACHE_HOME:-~/.cache}/msgcontract/, then reused). Jaeger runs with
# in-memory storage, every listener on a free loopback port, its own telemetry off, in a fresh temp dir
# whose pid file the caller uses to stop it (scripts/with-jaeger.sh does).
# A binary built from the module carries no UI assets: /trace/<id> shows Jaeger's
# placeholder page, while the API serves the trace; the demo draws it from the
# API itself (internal/traceview) on a port of its own.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "jaeger-start: $*" >&2; }

bin=$(bash scripts/install-jaeger.sh)

port() { bash scripts/free-port.sh; }
otlp=$(port)
http=$(port)
grpc=$(port)
while [[ "$http" == "$otlp" ]]; do http=$(port); done
while [[ "$grpc" == "$otlp" || "$grpc" == "$http" ]]; do grpc=$(port); done

dir=$(mktemp -d "${TMPDIR:-/tmp}/msgcontract-jaeger.XXXXXX")
cat >"$dir/config.yaml" <<YAML
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:$http
    grpc:
      endpoint: 127.0.0.1:$grpc
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$otlp
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
YAML
"$bin" --config "$dir/config.yaml" >"$dir/jaeger.log" 2>&1 &
echo $! >"$dir/pid"
for _ in $(seq 300); do
  if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
    cat "$dir/jaeger.log" >&2
    log "jaeger exited during startup"
    exit 1
  fi
  if curl -fsS "http://127.0.0.1:$http/api/services" >/dev/null 2>&1 &&
     (exec 3<>"/dev/tcp/127.0.0.1/$otlp") 2>/dev/null; then
    log "jaeger pid $(cat "$dir/pid") in $dir: OTLP/HTTP 127.0.0.1:$otlp, query 127.0.0.1:$http; stop: kill $(cat "$dir/pid")"
    echo "otlp=http://127.0.0.1:$otlp"
    echo "query=http://127.0.0.1:$http"
    exit 0
  fi
  sleep 0.2
done
cat "$dir/jaeger.log" >&2
log "jaeger did not answer within 60 s"
kill "$(cat "$dir/pid")" 2>/dev/null || true
exit 1
