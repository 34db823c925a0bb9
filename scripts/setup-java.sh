#!/usr/bin/env bash
# Resolves the Java toolchain of msgcontract's generated-code tests and the
# conformance suite from Maven Central into ~/.m2: protobuf-java and
# protobuf-java-util 4.29.0, JUnit 5, sqlite-jdbc, the Maven plugins, and the
# pinned protoc (com.google.protobuf:protoc:4.29.0, i.e. protoc 29.0) that
# generates the Java message classes. Needs a JDK 17 and Maven 3.8+ on PATH.
# Safe to re-run; later runs only check the local repository.
set -euo pipefail
cd "$(dirname "$0")/.."
pom=internal/toolchain/java/pom.xml
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) classifier=linux-x86_64 ;;
  Linux-aarch64) classifier=linux-aarch_64 ;;
  Darwin-x86_64) classifier=osx-x86_64 ;;
  Darwin-arm64) classifier=osx-aarch_64 ;;
  *) echo "setup-java: no protoc on Maven Central for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
# The harness depends on io.msgcontract:msgcontract-runtime (runtime-java/);
# `make runtime-java` installs it, and so does this script when it is missing.
if ! compgen -G "$HOME/.m2/repository/io/msgcontract/msgcontract-runtime/0.1.0/*.jar" >/dev/null; then
  bash scripts/install-runtime-java.sh
fi
empty="$(mktemp -d)"
trap 'rm -rf "$empty"' EXIT
# Building with no sources resolves the dependencies and the compiler and
# surefire plugins; dependency:get fetches protoc.
mvn -B -q -f "$pom" -Dgen.main="$empty" -Dgen.test="$empty" \
  -DskipTests test dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile="$empty/classpath.txt" \
  dependency:get -Dartifact="com.google.protobuf:protoc:4.29.0:exe:$classifier"
echo "setup-java: $(tr ':' '\n' <"$empty/classpath.txt" | wc -l) jars and protoc 29.0 ($classifier) in the local Maven repository"
