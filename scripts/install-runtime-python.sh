#!/usr/bin/env bash
# Builds the Python runtime msgcontract-runtime (runtime-python/), checks it
# and installs it into the project virtualenv .venv, where generated Python,
# the conformance suite and the demo import it:
#   1. scripts/check-python.sh: ruff, the generated msgcontract/v1/*_pb2.py,
#      mypy --strict and pytest (no test may be skipped), whose count this
#      script prints as "python-runtime: N passed";
#   2. pip install of the package (protobuf is its only dependency; the
#      asyncio drivers are the extras [aiosqlite], [asyncpg] and [nats]).
# Skipped when the installed package was built from the same sources.
#
# --no-tests (make demo): generate the *_pb2.py and pip install, without
# ruff, mypy or pytest; a later run without it (make test) still runs them,
# as it keeps its own stamp.
set -euo pipefail
notests=
case "${1:-}" in
  --no-tests) notests=1 ;;
  "") ;;
  *) echo "usage: install-runtime-python.sh [--no-tests]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
bash scripts/heartbeat.sh "runtime-python: setting up .venv" bash scripts/setup-python.sh >/dev/null
py=.venv/bin/python
src=runtime-python/src
stamp=.venv/.msgcontract-runtime.sha256
notests_stamp=.venv/.msgcontract-runtime-without-tests.sha256
sources="$(cat contracts/msgcontract/v1/*.proto contracts/sql/*.sql runtime-python/pyproject.toml \
  runtime-python/setup.py \
  $(find "$src" runtime-python/tests -type f -not -path '*egg-info*' -not -path '*__pycache__*' \
    -not -name '*_pb2.py' -not -name '*_pb2.pyi' | sort) |
  sha256sum | cut -d' ' -f1)"
if [[ "$(cat "$stamp" 2>/dev/null || true)" == "$sources" ]] && $py -c 'import msgcontract_runtime' 2>/dev/null &&
  [[ -f "$src/msgcontract/v1/envelope_pb2.py" ]]; then
  echo "python-runtime: up to date ($(cat .venv/.msgcontract-runtime.tests 2>/dev/null || echo '?') at install)"
  exit 0
fi
[[ -n "$notests" ]] || echo "runtime-python: ruff, protoc msgcontract/v1/*.proto, mypy --strict, pytest, pip install msgcontract-runtime into .venv"
ver="$(sed -n 's/^version = "\(.*\)"/\1/p' runtime-python/pyproject.toml)"
if ! grep -q "^RUNTIME_VERSION = \"$ver\"" "$src/msgcontract_runtime/version.py"; then
  echo "runtime-python: RUNTIME_VERSION differs from pyproject.toml's version $ver" >&2
  exit 1
fi
if [[ -n "$notests" ]]; then
  if [[ "$(cat "$notests_stamp" 2>/dev/null || true)" == "$sources" ]] && $py -c 'import msgcontract_runtime' 2>/dev/null &&
    [[ -f "$src/msgcontract/v1/envelope_pb2.py" ]]; then
    echo "runtime-python: up to date (installed without tests)"
    exit 0
  fi
  echo "runtime-python: protoc msgcontract/v1/*.proto, pip install msgcontract-runtime into .venv (tests not run; make test runs them)"
  (cd runtime-python && ../$py -B -c 'import setup; setup.generate_pb2()')
  bash scripts/heartbeat.sh "runtime-python: pip install" \
    $py -m pip install --quiet --disable-pip-version-check ./runtime-python
  echo "$sources" >"$notests_stamp"
  echo "runtime-python: installed (tests not run)"
  exit 0
fi
out="$(bash scripts/heartbeat.sh "runtime-python: ruff, mypy, pytest" bash scripts/check-python.sh)"
$py -m pip install --quiet --disable-pip-version-check ./runtime-python
passed="$(grep -oE '[0-9]+ passed' <<<"$out" | tail -1)"
echo "$passed" >.venv/.msgcontract-runtime.tests
echo "$sources" >"$stamp"
echo "python-runtime: $passed"
