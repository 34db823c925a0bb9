#!/usr/bin/env bash
# Checks the Python runtime's sources without installing them; `make check`
# runs it, and scripts/install-runtime-python.sh before it installs:
#   1. ruff on the package, conformance/python, examples/ and the generated
#      Python's goldens (one configuration, runtime-python/pyproject.toml's;
#      the goldens are checked as a service's project sees generated code:
#      its own packages (shop) first-party, the runtime's third-party);
#   2. msgcontract/v1/*_pb2.py (+ .pyi), git-ignored build outputs,
#      generated from contracts/ by runtime-python/setup.py's generate_pb2,
#      which a wheel build runs too;
#   3. mypy --strict on the package, its tests and benchmarks (and the
#      package and its tests against the oldest end's stubs, .venv-oldest);
#   4. pytest (PYTHONPATH=src) under scripts/with-postgres.sh (the asyncio
#      consumer's PostgreSQL tests), with a nats-server built from go.mod's
#      version (its NATS JetStream tests), once on each end of the protobuf
#      range, side by side: .venv (newest) and .venv-oldest (PROTOBUF's oldest
#      end, the same sources and _pb2 modules); fails on any skipped test and ends with one
#      line per end, "newest (protobuf X): N passed in ..." and the oldest's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-python.sh >/dev/null
py=.venv/bin/python
(cd runtime-python && ../$py -m ruff check --quiet .)
$py -m ruff check --quiet --config runtime-python/pyproject.toml conformance examples
$py -m ruff check --quiet --config runtime-python/pyproject.toml \
  --config 'lint.isort.known-first-party = ["shop"]' \
  --config 'lint.isort.known-third-party = ["msgcontract", "msgcontract_runtime"]' testdata/golden/python
(cd runtime-python && ../$py -B -c 'import setup; setup.generate_pb2()')
# The oldest end's stubs (types-protobuf 5.29) too, with a cache of its own;
# the two side by side (a cold mypy --strict is tens of seconds of one core).
(cd runtime-python && ../$py -m mypy --no-error-summary src/msgcontract_runtime tests bench) & mypy_newest=$!
(cd runtime-python && ../.venv-oldest/bin/python -m mypy --no-error-summary --cache-dir ../.venv-oldest/.mypy_cache \
  src/msgcontract_runtime tests) & mypy_oldest=$!
mypy_rc=0
wait $mypy_newest || mypy_rc=1
wait $mypy_oldest || mypy_rc=1
[[ $mypy_rc == 0 ]] || { echo "check-python: mypy --strict failed (above)" >&2; exit 1; }
"${GO:-go}" build -o .build/bin/nats-server github.com/nats-io/nats-server/v2
export MSGCONTRACT_NATS_SERVER="$PWD/.build/bin/nats-server"
# run_pytest VENV: the runtime's tests on VENV's python; prints pytest's
# summary line "N passed in Xs" (fails, with pytest's output, on a failure
# or a skipped test).
run_pytest() {
  local out
  out="$(cd runtime-python && PYTHONPATH=src "../$1/bin/python" -m pytest -q -p no:cacheprovider -rs 2>&1)" || {
    echo "$out" >&2
    echo "check-python: pytest failed on $1" >&2
    return 1
  }
  if grep -qE '[0-9]+ skipped' <<<"$out"; then
    echo "$out" >&2
    echo "check-python: tests were skipped on $1" >&2
    return 1
  fi
  tail -1 <<<"$out"
}
export -f run_pytest
. ./PROTOBUF
# The two ends run side by side (each mostly waits on its own servers and
# subprocesses), each in a database of its own on the one cluster: some
# tests keep their tables in the public schema.
bash scripts/with-postgres.sh bash -c 'set -euo pipefail
  psql -q "$MSGCONTRACT_PG_DSN" -c "CREATE DATABASE py_oldest"
  out=$(mktemp -d); trap "rm -rf $out" EXIT
  run_pytest .venv >"$out/newest" & newest=$!
  MSGCONTRACT_PG_DSN="${MSGCONTRACT_PG_DSN/\/postgres\?/\/py_oldest?}" run_pytest .venv-oldest >"$out/oldest" & oldest=$!
  rc=0
  wait $newest || rc=1
  wait $oldest || rc=1
  echo "newest (protobuf $1): $(cat "$out/newest")"
  echo "oldest (protobuf $2): $(cat "$out/oldest")"
  exit $rc' _ "$PYTHON_PROTOBUF_NEWEST" "$PYTHON_PROTOBUF_OLDEST"
