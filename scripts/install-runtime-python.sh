#!/usr/bin/env bash
# Builds the Python runtime msgcontract-runtime (runtime-python/), checks it
# and installs it into the project virtualenv .venv, where generated Python,
# the conformance suite and the demo import it:
#   1. generates msgcontract/v1/*_pb2.py (+ .pyi), git-ignored build
#      outputs, from contracts/ with the pinned protoc (grpcio-tools), by
#      runtime-python/setup.py's generate_pb2, which a wheel build runs too;
#      the package's proto/ links to contracts/, so the wheel ships the
#      .proto files for protoc's -I;
#   2. mypy --strict on the package and its tests (ruff, before, on every run:
#      the package, conformance/python, examples/ and the generated Python's
#      goldens), then pytest under
#      scripts/with-postgres.sh (the asyncio consumer's PostgreSQL tests),
#      with a nats-server built from go.mod (its NATS JetStream tests);
#      prints "python-runtime: N passed" and fails on any skipped test;
#   3. pip install of the package (protobuf is its only dependency; the
#      asyncio drivers are the extras [aiosqlite], [asyncpg] and [nats]).
# Skipped when the installed package was built from the same sources.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-python.sh >/dev/null
py=.venv/bin/python
src=runtime-python/src
# ruff takes a second, so it runs even when the package is up to date: it also
# checks Python outside the package's sources. One configuration,
# runtime-python/pyproject.toml's; the goldens are checked as a service's
# project sees generated code: its own packages (shop) first-party, the
# runtime's third-party.
(cd runtime-python && ../$py -m ruff check --quiet .)
$py -m ruff check --quiet --config runtime-python/pyproject.toml conformance examples
$py -m ruff check --quiet --config runtime-python/pyproject.toml \
  --config 'lint.isort.known-first-party = ["shop"]' \
  --config 'lint.isort.known-third-party = ["msgcontract", "msgcontract_runtime"]' testdata/golden/python
stamp=.venv/.msgcontract-runtime.sha256
sources="$(cat contracts/msgcontract/v1/*.proto runtime-python/pyproject.toml \
  runtime-python/setup.py \
  $(find "$src" runtime-python/tests -type f -not -path '*egg-info*' -not -path '*__pycache__*' \
    -not -name '*_pb2.py' -not -name '*_pb2.pyi' | sort) |
  sha256sum | cut -d' ' -f1)"
if [[ "$(cat "$stamp" 2>/dev/null || true)" == "$sources" ]] && $py -c 'import msgcontract_runtime' 2>/dev/null &&
  [[ -f "$src/msgcontract/v1/envelope_pb2.py" ]]; then
  echo "python-runtime: up to date ($(cat .venv/.msgcontract-runtime.tests 2>/dev/null || echo '?') at install)"
  exit 0
fi
echo "runtime-python: protoc msgcontract/v1/*.proto, mypy --strict, pytest, pip install msgcontract-runtime into .venv"
ver="$(sed -n 's/^version = "\(.*\)"/\1/p' runtime-python/pyproject.toml)"
if ! grep -q "^RUNTIME_VERSION = \"$ver\"" "$src/msgcontract_runtime/version.py"; then
  echo "runtime-python: RUNTIME_VERSION differs from pyproject.toml's version $ver" >&2
  exit 1
fi
(cd runtime-python && ../$py -B -c 'import setup; setup.generate_pb2()')
(cd runtime-python && ../$py -m mypy --no-error-summary src/msgcontract_runtime tests bench)
# The asyncio consumer's tests need PostgreSQL (a throwaway one per run) and
# a nats-server: the one the Go tests embed, built from go.mod's version.
"${GO:-go}" build -o .build/bin/nats-server github.com/nats-io/nats-server/v2
export MSGCONTRACT_NATS_SERVER="$PWD/.build/bin/nats-server"
out="$(bash scripts/with-postgres.sh bash -c "cd runtime-python && PYTHONPATH=src ../$py -m pytest -q -p no:cacheprovider -rs" 2>&1)" || {
  echo "$out" >&2
  exit 1
}
if grep -qE '[0-9]+ skipped' <<<"$out"; then
  echo "$out" >&2
  echo "runtime-python: tests were skipped" >&2
  exit 1
fi
$py -m pip install --quiet --disable-pip-version-check ./runtime-python
passed="$(grep -oE '[0-9]+ passed' <<<"$out" | tail -1)"
echo "$passed" >.venv/.msgcontract-runtime.tests
echo "$sources" >"$stamp"
echo "python-runtime: $passed"
