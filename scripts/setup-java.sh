#!/usr/bin/env bash
# Resolves the Java toolchain of msgcontract's generated-code tests from
# Maven Central into ~/.m2: protobuf-java and protobuf-java-util (matching
# the pinned protoc), JUnit 5, sqlite-jdbc and the Maven plugins. Runs the
# harness build once with no sources so every plugin is downloaded too.
# Safe to re-run; later runs are offline-fast.
set -euo pipefail
cd "$(dirname "$0")/.."
pom=conformance/java/pom.xml
empty="$(mktemp -d)"
trap 'rm -rf "$empty"' EXIT
mvn -B -q -f "$pom" -Dgen.main="$empty" -Dgen.test="$empty" \
  -DskipTests test dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile="$empty/classpath.txt"
echo "java: dependencies resolved ($(tr ':' '\n' <"$empty/classpath.txt" | wc -l) jars)"
