#!/usr/bin/env bash
# Checks msgcontract-runtime as a user installs it, each time in a fresh
# throwaway virtualenv (under a mktemp directory, removed at exit), with no
# pins but the ones named here; `make check-python-range` runs both modes.
#
#   --extras  pip install './runtime-python[every extra]' with nothing
#             pinned, so pip picks the newest release of everything the
#             package's bounds allow, then imports every module of
#             msgcontract_runtime (.kafka, .aio.kafka, .rabbitmq,
#             .aio.rabbitmq and .rocketmq included; HOME a temporary
#             directory, as RocketMQ's client writes its log under ~/logs
#             on import) and prints the protobuf, confluent-kafka, pika,
#             aio-pika and rocketmq-python-client versions pip chose;
#   --range   pip install ./runtime-python with protobuf at each end of the
#             supported range (PROTOBUF's PYTHON_PROTOBUF_OLDEST and _NEWEST)
#             and with the newest 6.x pip serves, then imports
#             msgcontract_runtime and msgcontract.v1's two modules with every
#             warning an error (python -W error), on protobuf's default (upb)
#             backend and on its pure-Python one, and round-trips an
#             Envelope.
#
# With no argument, both. Fails (exit 1) naming the install or the import
# that failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. ./PROTOBUF
PYTHON="${PYTHON:-python3.11}"
if ! command -v "$PYTHON" >/dev/null; then
  PYTHON=python3
fi
extras=kafka,rabbitmq,rocketmq,prometheus,otel,postgres,aiosqlite,asyncpg,aiomysql,nats,mysql
modes=()
case "${1:-}" in
  --extras | --range) modes=("${1#--}") ;;
  "") modes=(extras range) ;;
  *) echo "usage: check-python-extras.sh [--extras|--range]" >&2; exit 2 ;;
esac

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "check-python-extras: FAILED: $*" >&2
  exit 1
}

# pip builds a local directory in place: setup.py's hook writes the generated
# modules into src/, setuptools writes src/*.egg-info and build/. make test runs
# this script beside suites that import runtime-python/src, so every install
# here builds a copy of the package instead (its links followed, as pip's
# build follows them) and the checkout is never written to.
pkg="$tmp/pkg/runtime-python"
mkdir -p "$tmp/pkg"
tar -C . -chf - --exclude=build --exclude='*.egg-info' --exclude=__pycache__ --exclude=.pytest_cache \
  --exclude='*_pb2.py' --exclude='*_pb2.pyi' runtime-python | tar -C "$tmp/pkg" -xf - ||
  fail "copy runtime-python into $tmp/pkg"

# fresh NAME: a new virtualenv $tmp/NAME; prints its python.
fresh() {
  rm -rf "${tmp:?}/$1"
  "$PYTHON" -m venv "$tmp/$1" >&2
  echo "$tmp/$1/bin/python"
}

# install PY WHAT PIP-ARGS...: pip install PIP-ARGS into PY's venv; pip's
# output is shown only when it fails.
install() {
  local py="$1" what="$2"
  shift 2
  echo "check-python-extras: pip install $what"
  if ! "$py" -m pip install --quiet --disable-pip-version-check "$@" >"$tmp/pip.log" 2>&1; then
    cat "$tmp/pip.log" >&2
    fail "pip install $what"
  fi
}

check_extras() {
  local py
  py="$(fresh extras)"
  install "$py" "'./runtime-python[$extras]' (nothing pinned)" "$pkg[$extras]"
  # Every module of the package, each imported on its own so that the
  # failure names it.
  mkdir -p "$tmp/home"
  HOME="$tmp/home" "$py" - <<'EOF' || fail "import of msgcontract_runtime's modules with every extra installed (above)"
import importlib
import pkgutil
import sys
from importlib.metadata import version

import msgcontract_runtime

names = ["msgcontract_runtime"] + [
    m.name for m in pkgutil.walk_packages(msgcontract_runtime.__path__, "msgcontract_runtime.")
]
failed = []
for name in names:
    try:
        importlib.import_module(name)
    except Exception as e:  # each failure is reported, then the run fails
        failed.append(name)
        print(f"check-python-extras: import {name}: {type(e).__name__}: {e}", file=sys.stderr)
for must in ("msgcontract_runtime.kafka", "msgcontract_runtime.aio.kafka", "msgcontract_runtime.rabbitmq",
             "msgcontract_runtime.aio.rabbitmq", "msgcontract_runtime.rocketmq"):
    if must not in names:
        failed.append(must)
        print(f"check-python-extras: {must} is not in the installed package", file=sys.stderr)
if failed:
    sys.exit(1)
print(f"check-python-extras: imported {len(names)} modules of msgcontract_runtime; resolved protobuf "
      f"{version('protobuf')}, confluent-kafka {version('confluent-kafka')}, pika {version('pika')}, "
      f"aio-pika {version('aio-pika')}, rocketmq-python-client {version('rocketmq-python-client')}")
EOF
}

# load_on SPEC: a fresh venv with ./runtime-python and protobuf SPEC; the
# runtime's modules must load without a warning on both protobuf backends.
load_on() {
  local spec="$1" py impl
  py="$(fresh "range-${spec//[^0-9a-z.]/_}")"
  install "$py" "./runtime-python '$spec'" "$pkg" "$spec"
  for impl in upb python; do
    PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=$impl "$py" -W error - <<'EOF' ||
from importlib.metadata import version

import msgcontract_runtime  # noqa: F401
import msgcontract.v1.envelope_pb2
import msgcontract.v1.options_pb2
from google.protobuf.internal import api_implementation

env = msgcontract.v1.envelope_pb2.Envelope(biz_key="k", event_type="E", payload=b"\x0a\x01x")
assert msgcontract.v1.envelope_pb2.Envelope.FromString(env.SerializeToString()) == env
assert "event" in msgcontract.v1.options_pb2.DESCRIPTOR.extensions_by_name
print(f"check-python-extras: protobuf {version('protobuf')} ({api_implementation.Type()} backend): "
      "msgcontract_runtime, msgcontract.v1.envelope_pb2 and options_pb2 load with no warning")
EOF
      fail "import msgcontract_runtime, msgcontract.v1.envelope_pb2, msgcontract.v1.options_pb2 (python -W error, $impl backend) with $spec"
  done
}

check_range() {
  load_on "protobuf==$PYTHON_PROTOBUF_OLDEST"
  load_on "protobuf>=6,<7"
  load_on "protobuf==$PYTHON_PROTOBUF_NEWEST"
}

for mode in "${modes[@]}"; do
  "check_$mode"
done
echo "check-python-extras: ${modes[*]}: passed"
