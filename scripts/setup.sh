#!/usr/bin/env bash
# Installs everything `make test` needs on a fresh machine, idempotently:
#   - Debian packages: protoc (protobuf-compiler, libprotobuf-dev) for the
#     protoc-gen-msgcontract end-to-end test, PostgreSQL for the runtime's and
#     the registry's PostgreSQL tests, redis-server for the Redis pre-filter
#     test, mariadb-server for make test-mysql, Chromium for the registry
#     console's browser test, prometheus (promtool for ops/'s rule tests, the
#     server for make test-obs), gcc for cgo, which go test -race needs,
#     gcc-aarch64-linux-gnu for make dist's linux/arm64 msgcontract-ops
#     (cgo, SQLite), rabbitmq-server for make test-rabbitmq (one apt-get
#     update, only when something is missing; the services these packages
#     would start are kept from starting, and a RabbitMQ service that
#     started anyway is stopped and disabled: the tests start their own
#     throwaway servers), iproute2 for the chaos harness's network
#     namespaces (its partition fault);
#   - .venv (protoc via grpcio-tools, protobuf, mypy, pytest) and
#     .venv-registry (the Confluent schema-registry client);
#   - the Maven artifacts of the Java harness and the pinned protoc;
#   - buf (pinned, npm package into .tools/bin) for the buf generate tests,
#     compare-buf and bench-breaking.
#   - the Apache Kafka broker's jars (scripts/kafka-setup.sh) for make test-kafka.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v protoc >/dev/null 2>&1 || missing+=(protobuf-compiler libprotobuf-dev)
ls -d /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v mariadbd >/dev/null 2>&1 || [[ -x /usr/sbin/mariadbd ]] || missing+=(mariadb-server)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
[[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]] || missing+=(rabbitmq-server)
# ip netns, for the chaos harness's partition fault and its test.
command -v ip >/dev/null 2>&1 || [[ -x /usr/sbin/ip ]] || missing+=(iproute2)
sudo=""
[[ "$(id -u)" == 0 ]] || sudo=sudo
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]} from Debian's archive"
  export DEBIAN_FRONTEND=noninteractive
  # invoke-rc.d asks /usr/sbin/policy-rc.d before starting a service;
  # exit 101 denies it. One is put there for the install only, unless the
  # machine has its own (containers often do).
  policy=""
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\n# msgcontract setup.sh: no service starts during the install\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
    trap '$sudo rm -f "$policy"' EXIT
  fi
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  [[ -z "$policy" ]] || { $sudo rm -f "$policy"; trap - EXIT; }
fi
# Debian enables the rabbitmq-server unit; the tests never use it.
if [[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]] && command -v systemctl >/dev/null 2>&1 &&
  [[ -d /run/systemd/system ]] && systemctl is-enabled --quiet rabbitmq-server 2>/dev/null; then
  echo "setup: stopping and disabling the system rabbitmq-server service"
  $sudo systemctl disable --now rabbitmq-server >/dev/null 2>&1 || true
fi
bash scripts/setup-python.sh
bash scripts/setup-registry-client.sh
bash scripts/setup-java.sh
bash scripts/install-buf.sh
bash scripts/kafka-setup.sh >/dev/null
echo "setup: done"
