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
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-python.sh >/dev/null
py=.venv/bin/python
src=runtime-python/src
stamp=.venv/.msgcontract-runtime.sha256
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
echo "runtime-python: ruff, protoc msgcontract/v1/*.proto, mypy --strict, pytest, pip install msgcontract-runtime into .venv"
ver="$(sed -n 's/^version = "\(.*\)"/\1/p' runtime-python/pyproject.toml)"
if ! grep -q "^RUNTIME_VERSION = \"$ver\"" "$src/msgcontract_runtime/version.py"; then
  echo "runtime-python: RUNTIME_VERSION differs from pyproject.toml's version $ver" >&2
  exit 1
fi
out="$(bash scripts/check-python.sh)"
$py -m pip install --quiet --disable-pip-version-check ./runtime-python
passed="$(grep -oE '[0-9]+ passed' <<<"$out" | tail -1)"
echo "$passed" >.venv/.msgcontract-runtime.tests
echo "$sources" >"$stamp"
echo "python-runtime: $passed"
