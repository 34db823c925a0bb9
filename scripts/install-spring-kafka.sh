#!/usr/bin/env bash
# Installs io.msgcontract:msgcontract-spring-kafka (runtime-java/spring-kafka,
# the Spring Boot starter) and the module it runs on,
# io.msgcontract:msgcontract-runtime-kafka, into the local Maven repository,
# without running their tests (they need a broker and databases: make
# test-spring and make test-java-kafka run them), for the projects that
# depend on it from outside the Maven build: examples/services/spring (make
# services) and bench/chaos/spring (make chaos-mixed). Skipped when the
# installed jar was built from the same sources. Run make runtime-java first
# (core and the parent POM).
set -euo pipefail
cd "$(dirname "$0")/../runtime-java"
version="$(cat ../VERSION)"
jar="$HOME/.m2/repository/io/msgcontract/msgcontract-spring-kafka/$version/msgcontract-spring-kafka-$version.jar"
stamp=spring-kafka/target/.installed.sha256
sources="$(cat pom.xml core/pom.xml kafka/pom.xml spring-kafka/pom.xml $(find core/src/main kafka/src/main spring-kafka/src/main -type f | sort) | sha256sum | cut -d' ' -f1)"
if [[ -f "$jar" && "$(cat "$stamp" 2>/dev/null || true)" == "$sources" ]]; then
  echo "spring-kafka: up to date"
  exit 0
fi
mvn -B -q -Dstyle.color=never -pl spring-kafka -am install -DskipTests
mkdir -p spring-kafka/target
echo "$sources" > "$stamp"
echo "spring-kafka: installed $jar"
