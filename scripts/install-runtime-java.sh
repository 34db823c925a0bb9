#!/usr/bin/env bash
# Builds io.msgcontract:msgcontract-runtime (runtime-java/) with -Xlint:all
# -Werror, runs its JUnit 5 tests, checks that every @Test ran and none was
# skipped, checks the Javadoc, and installs the jar into the local Maven
# repository, where generated Java, the conformance suite, the demo and
# examples/services/java find it. Needs a JDK 17 and Maven 3.8+ on PATH.
set -euo pipefail
cd "$(dirname "$0")/../runtime-java"
echo "runtime-java: mvn install io.msgcontract:msgcontract-runtime (protoc, protobuf-java, JUnit from Maven Central on first run)"
pom="$(sed -n 's#^  <version>\(.*\)</version>#\1#p' pom.xml | head -1)"
if ! grep -q "RUNTIME = \"$pom\";" src/main/java/io/msgcontract/support/Version.java; then
  echo "runtime-java: Version.RUNTIME differs from the pom's version $pom" >&2
  exit 1
fi
rm -rf target/surefire-reports
mvn -B -q -Dstyle.color=never install javadoc:javadoc
want="$(grep -rhE '^\s*@Test\b' src/test/java | wc -l)"
read -r ran skipped < <(cat target/surefire-reports/TEST-*.xml |
  sed -nE 's/.*<testsuite [^>]*tests="([0-9]+)"[^>]*skipped="([0-9]+)".*/\1 \2/p' |
  awk '{r+=$1; s+=$2} END {print r+0, s+0}')
if [[ "$ran" != "$want" || "$skipped" != 0 ]]; then
  echo "runtime-java: $ran JUnit tests ran, $skipped skipped; the sources declare $want" >&2
  exit 1
fi
echo "java-runtime: $ran tests"
