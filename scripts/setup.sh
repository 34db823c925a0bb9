#!/usr/bin/env bash
# Installs everything `make test` needs on a fresh machine, idempotently:
#   - Debian packages: protoc (protobuf-compiler, libprotobuf-dev) for the
#     protoc-gen-msgcontract end-to-end test, PostgreSQL for the runtime's and
#     the registry's PostgreSQL tests, redis-server for the Redis pre-filter
#     test (one apt-get update, only when something is missing);
#   - buf, built from the Go module proxy into GOPATH/bin, for the plugin's
#     buf generate test (about 2.5 CPU-minutes, once);
#   - .venv (protoc via grpcio-tools, protobuf, mypy, pytest) and
#     .venv-registry (the Confluent schema-registry client);
#   - the Maven artifacts of the Java harness and the pinned protoc.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler libprotobuf-dev)
ls -d /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if ((${#missing[@]})); then
  sudo=""
  [[ "$(id -u)" == 0 ]] || sudo=sudo
  echo "setup: installing ${missing[*]} from Debian's archive"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
bash scripts/install-protoc.sh --with-buf
bash scripts/setup-python.sh
bash scripts/setup-registry-client.sh
bash scripts/setup-java.sh
echo "setup: done"
