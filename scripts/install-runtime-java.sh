#!/usr/bin/env bash
# Builds io.msgcontract:msgcontract-runtime (runtime-java/core, a module of the
# Maven build runtime-java/) and io.msgcontract:msgcontract-runtime-micrometer
# (runtime-java/micrometer, no broker needed) with -Xlint:all -Werror, runs
# their JUnit 5 tests, checks that every @Test of both ran and none was
# skipped, checks the Javadoc, and installs the jars and the parent POM
# (io.msgcontract:msgcontract-runtime-parent) into the local Maven repository, where generated Java, the conformance suite,
# the demo and examples/services/java find them. The tests run on both ends of
# PROTOBUF's Java range: with the POM's protobuf-java (the newest end), then
# again on the oldest (-Dprotobuf.version), each run's JUnit count checked; the
# jars installed are the first build's. The kafka and rabbitmq modules' tests need
# a broker: make test-java-kafka and make test-java-rabbitmq build and install
# them. Needs a JDK 17 and
# Maven 3.8+ on PATH. Skipped when the installed jar was built from the same
# sources.
#
# --no-tests (make demo): install the jars and the parent POM without running
# or compiling the tests or checking the Javadoc; a later run without it
# (make test) still runs them, as it keeps its own stamp.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
notests=
case "${1:-}" in
  --no-tests) notests=1 ;;
  "") ;;
  *) echo "usage: install-runtime-java.sh [--no-tests]" >&2; exit 2 ;;
esac
cd "$here/../runtime-java"
# JAVA_PROTOBUF_NEWEST (pom.xml's protobuf.version) and JAVA_PROTOBUF_OLDEST
source ../PROTOBUF
stamp=core/target/.installed.sha256
notests_stamp=core/target/.installed-without-tests.sha256
# the modules this script builds, tests and installs (-pl)
modules=core,micrometer
sources="$(cat ../PROTOBUF pom.xml core/pom.xml micrometer/pom.xml ../contracts/msgcontract/v1/*.proto ../contracts/sql/*.sql $(find core/src micrometer/src -type f | sort) | sha256sum | cut -d' ' -f1)"
version="$(cat ../VERSION)"
jar="$HOME/.m2/repository/io/msgcontract/msgcontract-runtime/$version/msgcontract-runtime-$version.jar"
mjar="$HOME/.m2/repository/io/msgcontract/msgcontract-runtime-micrometer/$version/msgcontract-runtime-micrometer-$version.jar"
parent="$HOME/.m2/repository/io/msgcontract/msgcontract-runtime-parent/$version/msgcontract-runtime-parent-$version.pom"
if [[ -f "$jar" && -f "$mjar" && -f "$parent" && "$(cat "$stamp" 2>/dev/null || true)" == "$sources" ]]; then
  echo "java-runtime: up to date ($(cat core/target/.tests 2>/dev/null || echo '?') tests at install)"
  exit 0
fi
if [[ -n "$notests" && -f "$jar" && -f "$mjar" && -f "$parent" && "$(cat "$notests_stamp" 2>/dev/null || true)" == "$sources" ]]; then
  echo "runtime-java: up to date (installed without tests)"
  exit 0
fi
# core's OutboxWakeTest LISTENs on a PostgreSQL: a throwaway one unless the
# caller has one.
if [[ -z "$notests" && -z "${MSGCONTRACT_PG_DSN:-}" ]]; then
  exec bash "$here/with-postgres.sh" bash "$here/install-runtime-java.sh" "$@"
fi
[[ -n "$notests" ]] || echo "runtime-java: mvn install io.msgcontract:msgcontract-runtime and -micrometer (protoc, protobuf-java, Micrometer, JUnit from Maven Central on first run)"
pom="$(sed -n 's#^  <version>\(.*\)</version>#\1#p' pom.xml | head -1)"
if ! grep -q "RUNTIME = \"$pom\";" core/src/main/java/io/msgcontract/support/Version.java; then
  echo "runtime-java: Version.RUNTIME differs from the pom's version $pom" >&2
  exit 1
fi
mkdir -p core/target
if [[ -n "$notests" ]]; then
  echo "runtime-java: mvn install without tests (make test runs them); the first run downloads from Maven Central"
  if ! bash "$here/heartbeat.sh" "runtime-java: mvn install" \
    bash -c 'mvn -B -q -Dstyle.color=never -pl '"$modules"' -am -Dmaven.test.skip=true install >core/target/install.log 2>&1'; then
    sed 's/\x1b\[[0-9;]*m//g' core/target/install.log >&2
    echo "runtime-java: mvn install failed" >&2
    exit 1
  fi
  echo "$sources" >"$notests_stamp"
  echo "runtime-java: installed (tests not run)"
  exit 0
fi
want="$(grep -rhE '^\s*@Test\b' --exclude='*IT.java' core/src/test/java micrometer/src/test/java | wc -l)"
# checkcount END: every declared @Test (core's and micrometer's) ran in
# surefire's reports, none skipped; sets ran.
checkcount() {
  local skipped
  read -r ran skipped < <(cat core/target/surefire-reports/TEST-*.xml micrometer/target/surefire-reports/TEST-*.xml |
    sed -nE 's/.*<testsuite [^>]*tests="([0-9]+)"[^>]*skipped="([0-9]+)".*/\1 \2/p' |
    awk '{r+=$1; s+=$2} END {print r+0, s+0}')
  if [[ "$ran" != "$want" || "$skipped" != 0 ]]; then
    echo "runtime-java: $ran JUnit tests ran on protobuf-java $1, $skipped skipped; the sources declare $want" >&2
    exit 1
  fi
}
rm -rf core/target/surefire-reports micrometer/target/surefire-reports
# -am: the parent POM too, which the installed jar's POM names
if ! bash "$here/heartbeat.sh" "runtime-java: mvn install" \
  bash -c 'mvn -B -q -Dstyle.color=never -pl '"$modules"' -am install javadoc:javadoc >core/target/install.log 2>&1'; then
  sed 's/\x1b\[[0-9;]*m//g' core/target/install.log >&2
  echo "runtime-java: mvn install failed" >&2
  exit 1
fi
checkcount "$JAVA_PROTOBUF_NEWEST"
newest="$ran"
# The oldest end: the same sources compiled and tested against the oldest
# protobuf-java (the runtime's own classes come from the oldest protoc either
# way); nothing is installed from this build.
rm -rf core/target/surefire-reports micrometer/target/surefire-reports
export JAVA_PROTOBUF_OLDEST
if ! bash "$here/heartbeat.sh" "runtime-java: mvn test on protobuf-java $JAVA_PROTOBUF_OLDEST" \
  bash -c 'mvn -B -q -Dstyle.color=never -pl '"$modules"' -am -Dprotobuf.version="$JAVA_PROTOBUF_OLDEST" test >core/target/test-oldest.log 2>&1'; then
  sed 's/\x1b\[[0-9;]*m//g' core/target/test-oldest.log >&2
  echo "runtime-java: mvn test on protobuf-java $JAVA_PROTOBUF_OLDEST failed" >&2
  exit 1
fi
checkcount "$JAVA_PROTOBUF_OLDEST"
echo "$newest" >core/target/.tests
echo "$sources" >"$stamp"
echo "java-runtime: $newest tests on protobuf-java $JAVA_PROTOBUF_NEWEST, $ran on $JAVA_PROTOBUF_OLDEST"
