#!/usr/bin/env bash
# Builds the Python runtime msgcontract-runtime (runtime-python/), checks it
# and installs it into the project virtualenvs, .venv (the newest end of the
# protobuf range, where generated Python, the conformance suite and the demo
# import it) and .venv-oldest (the oldest end, PROTOBUF; the oldest
# conformance executors import it there):
#   1. scripts/check-python.sh: ruff, the generated msgcontract/v1/*_pb2.py,
#      mypy --strict and pytest on each end (no test may be skipped), whose
#      counts this script prints as
#      "python-runtime: N passed (protobuf X), M passed (protobuf Y)";
#   2. pip install of the package into both (protobuf is its only
#      dependency; the asyncio drivers are the extras [aiosqlite], [asyncpg]
#      and [nats]).
# Skipped when the installed package was built from the same sources.
#
# --no-tests (make demo): generate the *_pb2.py and pip install into .venv
# alone, without ruff, mypy or pytest; a later run without it (make test)
# still runs them, as it keeps its own stamp.
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
  .venv-oldest/bin/python -c 'import msgcontract_runtime' 2>/dev/null && [[ -f "$src/msgcontract/v1/envelope_pb2.py" ]]; then
  echo "python-runtime: up to date ($(cat .venv/.msgcontract-runtime.tests 2>/dev/null || echo '?') at install)"
  exit 0
fi
[[ -n "$notests" ]] || echo "runtime-python: ruff, protoc msgcontract/v1/*.proto, mypy --strict, pytest on both protobuf ends, pip install msgcontract-runtime into .venv and .venv-oldest"
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
# Its output is kept for the counts below; when it fails, it is what says why.
out="$(bash scripts/heartbeat.sh "runtime-python: ruff, mypy, pytest" bash scripts/check-python.sh)" || {
  printf '%s\n' "$out" >&2
  echo "runtime-python: scripts/check-python.sh failed (above); nothing installed" >&2
  exit 1
}
# One wheel, installed on both ends.
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
bash scripts/heartbeat.sh "runtime-python: pip wheel" \
  $py -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$wheels" ./runtime-python
for venv in .venv .venv-oldest; do
  # The same version as installed: replaced (--force-reinstall), then its dependencies checked.
  $venv/bin/python -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/*.whl
  $venv/bin/python -m pip install --quiet --disable-pip-version-check "$wheels"/*.whl
done
# check-python.sh's closing lines: "newest (protobuf X): N passed in ...", then the oldest's.
passed="$(sed -nE 's/^(newest|oldest) \(protobuf ([^)]*)\): ([0-9]+ passed).*/\3 (protobuf \2)/p' <<<"$out" | paste -sd, | sed 's/,/, /g')"
echo "$passed" >.venv/.msgcontract-runtime.tests
echo "$sources" >"$stamp"
echo "python-runtime: $passed"
