#!/usr/bin/env bash
# Creates the project virtualenvs at the repository root, one per end of the
# supported protobuf range (PROTOBUF):
#   .venv         the newest end: requirements-dev.txt (protoc via
#                 grpcio-tools, the protobuf runtime, mypy, pytest, the
#                 runtime's extras, ruff, build tools);
#   .venv-oldest  the oldest end: PROTOBUF's PYTHON_*_OLDEST protobuf,
#                 grpcio-tools and types-protobuf, with what the Python
#                 conformance executors and runtime-python/tests need beside
#                 them (mypy, pytest, the asyncio drivers, prometheus-client,
#                 OpenTelemetry, psycopg) at requirements-dev.txt's pins.
# scripts/install-runtime-python.sh installs msgcontract-runtime into both.
# Safe to re-run: each venv keeps a stamp of what it was installed from and
# is only reinstalled when that changed.
set -euo pipefail
cd "$(dirname "$0")/.."
. ./PROTOBUF
PYTHON="${PYTHON:-python3.11}"
if ! command -v "$PYTHON" >/dev/null; then
  PYTHON=python3
fi

# venv DIR STAMP HASH WHAT PIP-ARGS...: creates DIR and pip installs PIP-ARGS
# (the packages WHAT) into it unless DIR/STAMP already holds HASH, that of
# what PIP-ARGS install.
venv() {
  local dir="$1" stamp="$1/$2" want="$3" what="$4"
  shift 4
  if [ ! -x "$dir/bin/python" ]; then
    echo "setup-python: creating $dir with $("$PYTHON" --version)"
    "$PYTHON" -m venv "$dir"
  fi
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    echo "setup-python: installing into $dir ($what); the first time takes minutes"
    bash scripts/pip-install.sh "setup-python($dir)" "$dir" "$@"
    echo "$want" >"$stamp"
  fi
}

venv .venv .requirements-dev.sha256 "$(sha256sum requirements-dev.txt | cut -d' ' -f1)" \
  "$(grep -oE '^[a-z-]+' requirements-dev.txt | paste -sd' ')" -r requirements-dev.txt

# The oldest end: PROTOBUF's three versions, and requirements-dev.txt's pins
# of the other packages it needs (one home for each version).
oldest=(
  "protobuf==$PYTHON_PROTOBUF_OLDEST"
  "grpcio-tools==$PYTHON_GRPCIO_TOOLS_OLDEST"
  "types-protobuf==$PYTHON_TYPES_PROTOBUF_OLDEST"
)
for name in mypy pytest nats-py prometheus-client 'psycopg\[binary\]' aiosqlite asyncpg asyncpg-stubs \
  opentelemetry-api opentelemetry-sdk; do
  pin="$(grep -E "^$name==" requirements-dev.txt)" || {
    echo "setup-python: requirements-dev.txt pins no ${name//\\/}, which .venv-oldest needs" >&2
    exit 1
  }
  oldest+=("$pin")
done
venv .venv-oldest .requirements.sha256 "$(printf '%s\n' "${oldest[@]}" | sha256sum | cut -d' ' -f1)" \
  "${oldest[*]}" "${oldest[@]}"

.venv/bin/python -m grpc_tools.protoc --version
.venv-oldest/bin/python -m grpc_tools.protoc --version
