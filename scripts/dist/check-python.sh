#!/usr/bin/env bash
# scripts/dist/check-python.sh DIST_DIR (run by make release-check) installs
# msgcontract-runtime $VERSION (default: the VERSION file) with every extra
# its wheel declares from DIST_DIR/python into a fresh virtualenv, with an
# empty pip cache and no constraints, so each dependency comes at the newest
# version the extras' bounds allow, as a user's first `pip install` gets it.
# Then it imports, each in its own interpreter, the modules every extra
# enables and protoc's output, and checks the wheel's protos are where
# `python -m msgcontract_runtime.include` says. One line per check:
#   release-check: python extra kafka imports: ok
# Exits non-zero if any check failed. Needs PyPI (the dependencies).
set -uo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 DIST_DIR (the directory make dist wrote, holding python/)" >&2
  exit 2
fi
dist="$(cd "$1" && pwd)" || { echo "release-check: python: no directory $1" >&2; exit 2; }
cd "$(dirname "$0")/../.."
VERSION="${VERSION:-$(cat VERSION)}"
wheel="$dist/python/msgcontract_runtime-$VERSION-py3-none-any.whl"
if [[ ! -f "$wheel" ]]; then
  echo "release-check: python: no $wheel; run make dist VERSION=$VERSION first" >&2
  exit 1
fi

# The modules each extra enables. An extra the wheel declares and this list
# lacks fails the check: a new extra needs its imports named here.
declare -A modules=(
  [mysql]="pymysql msgcontract_runtime.dedup msgcontract_runtime.outbox"
  [prometheus]="prometheus_client msgcontract_runtime.observe"
  [otel]="msgcontract_runtime.tracing"
  [kafka]="msgcontract_runtime.kafka msgcontract_runtime.aio.kafka"
  [rabbitmq]="msgcontract_runtime.rabbitmq msgcontract_runtime.aio.rabbitmq"
  [rocketmq]="msgcontract_runtime.rocketmq"
  [postgres]="psycopg"
  [aiosqlite]="msgcontract_runtime.aio.sqlite"
  [asyncpg]="msgcontract_runtime.aio.postgres"
  [aiomysql]="msgcontract_runtime.aio.mysql"
  [nats]="msgcontract_runtime.aio.nats"
)
# What an extra needs beyond importing its modules (its classes work).
declare -A exercise=(
  [prometheus]="from msgcontract_runtime.observe import PrometheusMetrics; import prometheus_client as pc; PrometheusMetrics(pc.CollectorRegistry())"
)

PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null || PYTHON=python3
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export PIP_CACHE_DIR="$tmp/pip-cache"
unset PIP_CONSTRAINT PIP_REQUIREMENT PIP_NO_DEPS PIP_FIND_LINKS PIP_PRE

failed=0
check() { # check NAME CMD...: runs CMD, prints NAME: ok or NAME: FAILED and CMD's output
  local name="$1"
  shift
  local out
  if out="$("$@" 2>&1)"; then
    echo "release-check: $name: ok"
  else
    echo "release-check: $name: FAILED" >&2
    sed 's/^/    /' <<<"$out" >&2
    failed=1
  fi
}

extras="$(unzip -p "$wheel" "msgcontract_runtime-$VERSION.dist-info/METADATA" | sed -n 's/^Provides-Extra: //p' | sort)"
if [[ -z "$extras" ]]; then
  echo "release-check: python: $wheel declares no extras; its METADATA is not what runtime-python/pyproject.toml builds" >&2
  exit 1
fi
for e in $extras; do
  if [[ -z "${modules[$e]:-}" ]]; then
    echo "release-check: python extra $e: FAILED: scripts/dist/check-python.sh names no module for it; add the modules it enables to its list" >&2
    failed=1
  fi
done

"$PYTHON" -m venv "$tmp/venv"
py="$tmp/venv/bin/python"
spec="msgcontract-runtime[$(paste -sd, <<<"$extras")]==$VERSION"
if ! "$py" -m pip install --disable-pip-version-check --progress-bar off --find-links "$dist/python" "$spec" >"$tmp/pip.log" 2>&1; then
  tail -n 30 "$tmp/pip.log" >&2
  echo "release-check: python install $spec: FAILED (pip's last lines are above)" >&2
  exit 1
fi
echo "release-check: python install $spec from $1/python into a fresh virtualenv: ok"
# The installed distribution is the wheel of DIST_DIR, not one from the index.
check "python msgcontract-runtime is the wheel of $1/python" \
  grep -qE "msgcontract[-_]runtime-$VERSION-py3-none-any.whl" "$tmp/pip.log"
echo "release-check: python resolved: $("$py" -m pip list --disable-pip-version-check --format=freeze 2>/dev/null |
  grep -iE '^(confluent-kafka|pika|aio-pika|rocketmq-python-client|authlib|httpx2?|protobuf|googleapis-common-protos|psycopg|pymysql|aiomysql|asyncpg|aiosqlite|nats-py|prometheus.client|opentelemetry-api)==' | paste -sd' ')"

check "python base imports (msgcontract.v1.envelope_pb2, options_pb2, msgcontract_runtime $VERSION)" \
  "$py" -c "
import msgcontract.v1.envelope_pb2, msgcontract.v1.options_pb2, msgcontract_runtime
from msgcontract_runtime.version import RUNTIME_VERSION
assert RUNTIME_VERSION == '$VERSION', f'msgcontract_runtime.version.RUNTIME_VERSION is {RUNTIME_VERSION!r}, the release is $VERSION'
"
check "python protos under msgcontract_runtime.include (protoc -I)" \
  "$py" -c "
import os, sys
from msgcontract_runtime.include import include_dir
for p in ('msgcontract/v1/options.proto', 'msgcontract/v1/envelope.proto'):
    if not os.path.isfile(os.path.join(include_dir(), p)):
        sys.exit(f'no {p} under {include_dir()}')
"
for e in $extras; do
  [[ -n "${modules[$e]:-}" ]] || continue
  code="$(for m in ${modules[$e]}; do echo "import $m"; done)
${exercise[$e]:-}"
  # HOME: RocketMQ's client writes its log under ~/logs on import.
  check "python extra $e imports" env HOME="$tmp" "$py" -c "$code"
done

if ((failed)); then
  echo "release-check: python: FAILED (above)" >&2
  exit 1
fi
