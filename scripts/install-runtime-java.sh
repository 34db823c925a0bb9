#!/usr/bin/env bash
# Builds io.msgcontract:msgcontract-runtime (runtime-java/) with -Xlint:all
# -Werror, runs its JUnit 5 tests, checks that every @Test ran and none was
# skipped, checks the Javadoc, and installs the jar into the local Maven
# repository, where generated Java, the conformance suite, the demo and
# examples/services/java find it. Needs a JDK 17 and Maven 3.8+ on PATH.
# Skipped when the installed jar was built from the same sources.
set -euo pipefail
cd "$(dirname "$0")/../runtime-java"
stamp=target/.installed.sha256
sources="$(cat pom.xml ../contracts/msgcontract/v1/*.proto $(find src -type f | sort) | sha256sum | cut -d' ' -f1)"
version="$(cat ../VERSION)"
jar="$HOME/.m2/repository/io/msgcontract/msgcontract-runtime/$version/msgcontract-runtime-$version.jar"
if [[ -f "$jar" && "$(cat "$stamp" 2>/dev/null || true)" == "$sources" ]]; then
  echo "java-runtime: up to date ($(cat target/.tests 2>/dev/null || echo '?') tests at install)"
  exit 0
fi
echo "runtime-java: mvn install io.msgcontract:msgcontract-runtime (protoc, protobuf-java, JUnit from Maven Central on first run)"
pom="$(sed -n 's#^  <version>\(.*\)</version>#\1#p' pom.xml | head -1)"
if ! grep -q "RUNTIME = \"$pom\";" src/main/java/io/msgcontract/support/Version.java; then
  echo "runtime-java: Version.RUNTIME differs from the pom's version $pom" >&2
  exit 1
fi
rm -rf target/surefire-reports
mkdir -p target
if ! mvn -B -q -Dstyle.color=never install javadoc:javadoc >target/install.log 2>&1; then
  sed 's/\x1b\[[0-9;]*m//g' target/install.log >&2
  echo "runtime-java: mvn install failed" >&2
  exit 1
fi
want="$(grep -rhE '^\s*@Test\b' --exclude='*IT.java' src/test/java | wc -l)"
read -r ran skipped < <(cat target/surefire-reports/TEST-*.xml |
  sed -nE 's/.*<testsuite [^>]*tests="([0-9]+)"[^>]*skipped="([0-9]+)".*/\1 \2/p' |
  awk '{r+=$1; s+=$2} END {print r+0, s+0}')
if [[ "$ran" != "$want" || "$skipped" != 0 ]]; then
  echo "runtime-java: $ran JUnit tests ran, $skipped skipped; the sources declare $want" >&2
  exit 1
fi
echo "$ran" >target/.tests
echo "$sources" >"$stamp"
echo "java-runtime: $ran tests"
