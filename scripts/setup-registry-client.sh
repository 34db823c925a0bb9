#!/usr/bin/env bash
# Creates .venv-registry/ at the repository root with a pinned Confluent
# Schema Registry client (confluent-kafka's schema_registry package) and
# grpcio-tools to generate the Python classes the registry client test
# serializes. The Go test registry/api TestConfluentPythonClient runs
# registry/api/testdata/confluent_client.py with it, and skips when the
# virtualenv is missing. Safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3.11}"
if ! command -v "$PYTHON" >/dev/null; then
  PYTHON=python3
fi
if [ ! -x .venv-registry/bin/python ]; then
  "$PYTHON" -m venv .venv-registry
fi
reqs="confluent-kafka==2.6.1 requests==2.32.3 protobuf==5.28.3 grpcio-tools==1.68.1 schemathesis==4.32.5"
stamp=.venv-registry/.pins
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$reqs" ]; then
  echo "setup-registry-client: installing $reqs into .venv-registry; the first time takes minutes"
  # shellcheck disable=SC2086 # the pins are separate arguments
  bash scripts/pip-install.sh setup-registry-client .venv-registry $reqs
  echo "$reqs" >"$stamp"
fi
.venv-registry/bin/python -c 'import confluent_kafka; print("confluent-kafka", confluent_kafka.version()[0])'
