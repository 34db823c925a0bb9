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

# Confluent's data-contract rule executors (CEL) came after 2.6.1, and a
# newer client caches differently from what confluent_client.py expects, so
# they go to .venv-registry/rules, which the rule-execution test
# (internal/cli/ops TestConfluentRuleExecution) puts first on PYTHONPATH.
# The [rules] extra would also pull every cloud KMS client and protobuf 6+;
# the CEL executor needs only these.
rules="confluent-kafka==2.16.1 cel-python==0.5.0 httpx==0.28.1 authlib==1.6.5 cachetools==5.5.2 attrs==25.3.0 googleapis-common-protos==1.66.0 protobuf==5.28.3"
rstamp=.venv-registry/.rules-pins
if [ "$(cat "$rstamp" 2>/dev/null || true)" != "$rules" ]; then
  echo "setup-registry-client: installing $rules into .venv-registry/rules"
  rm -rf .venv-registry/rules
  # shellcheck disable=SC2086 # the pins are separate arguments
  bash scripts/pip-install.sh setup-registry-client .venv-registry --target .venv-registry/rules $rules
  echo "$rules" >"$rstamp"
fi
PYTHONPATH=.venv-registry/rules .venv-registry/bin/python -c 'import confluent_kafka; from confluent_kafka.schema_registry.rules.cel.cel_executor import CelExecutor; print("confluent-kafka (rules)", confluent_kafka.version()[0])'
