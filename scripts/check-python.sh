#!/usr/bin/env bash
# The Python part of `make check`: mypy --strict on the runtime package and
# its tests, then its unit tests (PostgreSQL ones on a throwaway cluster).
# No install: the tests import the sources (PYTHONPATH=src), after the
# envelope and options modules are generated from contracts/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-python.sh >/dev/null
py=.venv/bin/python
src=runtime-python/src
wkt="$($py -c 'import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), "_proto"))')"
$py -m grpc_tools.protoc -Icontracts -I"$wkt" --python_out="$src" --pyi_out="$src" \
  contracts/msgcontract/v1/options.proto contracts/msgcontract/v1/envelope.proto
(cd runtime-python && ../$py -m mypy --no-error-summary src/msgcontract_runtime tests bench)
"${GO:-go}" build -o .build/bin/nats-server github.com/nats-io/nats-server/v2
export MSGCONTRACT_NATS_SERVER="$PWD/.build/bin/nats-server"
bash scripts/with-postgres.sh bash -c "cd runtime-python && PYTHONPATH=src ../$py -m pytest -q -p no:cacheprovider -x"
