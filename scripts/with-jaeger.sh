#!/usr/bin/env bash
# Runs a command with a throwaway Jaeger (scripts/jaeger-start.sh) and stops
# it afterwards, whatever the command's outcome. The command sees
# OTEL_EXPORTER_OTLP_ENDPOINT (OTLP/HTTP, what OpenTelemetry's SDKs in Go,
# Java and Python read) and MSGCONTRACT_JAEGER_UI (the query API the demo reads the trace from).
# The command's exit status is returned.
#
#   bash scripts/with-jaeger.sh go run ./examples/demo
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
out=$(bash scripts/jaeger-start.sh 2>"$log") || { cat "$log" >&2; rm -f "$log"; exit 1; }
cat "$log" >&2
dir=$(sed -n 's/^jaeger-start: jaeger pid [0-9]* in \([^:]*\): .*/\1/p' "$log")
trap 'p=$(cat "$dir/pid" 2>/dev/null) && { kill "$p"; while kill -0 "$p" 2>/dev/null; do sleep 0.1; done; } >/dev/null 2>&1; rm -rf "$dir" "$log"' EXIT
export OTEL_EXPORTER_OTLP_ENDPOINT="$(sed -n 's/^otlp=//p' <<<"$out")"
export MSGCONTRACT_JAEGER_UI="$(sed -n 's/^query=//p' <<<"$out")"
"$@"
