#!/usr/bin/env bash
# Resolves the Java toolchain of msgcontract's generated-code tests and the
# conformance suite from Maven Central into ~/.m2, for both ends of PROTOBUF's
# Java range (JAVA_PROTOBUF_NEWEST and JAVA_PROTOBUF_OLDEST): protobuf-java and
# protobuf-java-util of each, the protoc of each (com.google.protobuf:protoc
# 4.Y.Z is protoc Y.Z) that generates the Java message classes, JUnit 5,
# sqlite-jdbc and the Maven plugins. Needs a JDK 17 and Maven 3.8+ on PATH.
# Safe to re-run; later runs only check the local repository.
set -euo pipefail
cd "$(dirname "$0")/.."
source PROTOBUF
pom=conformance/toolchain/java/pom.xml
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) classifier=linux-x86_64 ;;
  Linux-aarch64) classifier=linux-aarch_64 ;;
  Darwin-x86_64) classifier=osx-x86_64 ;;
  Darwin-arm64) classifier=osx-aarch_64 ;;
  *) echo "setup-java: no protoc on Maven Central for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
# The harness depends on io.msgcontract:msgcontract-runtime (runtime-java/core);
# `make runtime-java` installs it with msgcontract-runtime-micrometer, and so
# does this script when either is missing (which also brings Micrometer's jars
# into ~/.m2 for make check-java's offline build).
if ! compgen -G "$HOME/.m2/repository/io/msgcontract/msgcontract-runtime/$(cat VERSION)/*.jar" >/dev/null ||
  ! compgen -G "$HOME/.m2/repository/io/msgcontract/msgcontract-runtime-micrometer/$(cat VERSION)/*.jar" >/dev/null; then
  bash scripts/install-runtime-java.sh
fi
# core's tests' PostgreSQL driver (OutboxWakeTest), for make check-java's
# offline build when the runtime above was installed before it was one.
pgjdbc="$(sed -n '/<artifactId>postgresql<\/artifactId>/{n;s#.*<version>\(.*\)</version>.*#\1#p}' runtime-java/pom.xml)"
if [[ ! -f "$HOME/.m2/repository/org/postgresql/postgresql/$pgjdbc/postgresql-$pgjdbc.jar" ]]; then
  mvn -B -q dependency:get -Dartifact="org.postgresql:postgresql:$pgjdbc" >/dev/null
fi
empty="$(mktemp -d)"
summary=
trap 'rm -rf "$empty"' EXIT
# Building with no sources resolves the dependencies and the compiler and
# surefire plugins; dependency:get fetches protoc. Maven's own progress is
# one "Downloaded from central" line per artifact, shown (the first run
# only has any); its ANSI reset codes are stripped from the log.
for version in "$JAVA_PROTOBUF_NEWEST" "$JAVA_PROTOBUF_OLDEST"; do
  protoc="protoc ${version#*.}"
  echo "setup-java: resolving the Java toolchain (protobuf-java $version, JUnit 5, sqlite-jdbc, Maven plugins, $protoc) into ~/.m2; the first time takes minutes"
  set +e
  # The log exists before Maven starts, so that tail never races its creation.
  : >"$empty/mvn.log"
  mvn -B -f "$pom" -Dgen.main="$empty" -Dgen.test="$empty" \
    -Dprotobuf.version="$version" -Dprotoc.version="$version" \
    -DskipTests test dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile="$empty/classpath.txt" \
    dependency:get -Dartifact="com.google.protobuf:protoc:$version:exe:$classifier" >"$empty/mvn.log" 2>&1 &
  mvn_pid=$!
  # Follow the log while Maven runs, so a first run shows each download.
  tail -n +1 -f --pid="$mvn_pid" "$empty/mvn.log" | sed -u 's/\x1b\[[0-9;]*m//g' |
    grep --line-buffered -E '^\[INFO\] Downloaded from|^\[(ERROR|WARNING)\]' |
    sed -u -e 's/^\[INFO\] //' -e 's/^/setup-java: /'
  wait "$mvn_pid"
  status=$?
  set -e
  if ((status != 0)); then
    sed 's/\x1b\[[0-9;]*m//g' "$empty/mvn.log" | tail -n 40 >&2
    echo "setup-java: mvn failed (exit $status); its last lines are above" >&2
    exit "$status"
  fi
  if ! grep -q "/protobuf-java-$version.jar" "$empty/classpath.txt"; then
    echo "setup-java: the harness classpath has no protobuf-java $version" >&2
    exit 1
  fi
  summary+="${summary:+; }$(tr ':' '\n' <"$empty/classpath.txt" | wc -l) jars and $protoc"
done
# The plugins of the profile release (scripts/dist/maven.sh, make dist) that
# no build above uses: the sources jar and the deploy to dist/maven.
for plugin in maven-source-plugin:3.3.1 maven-deploy-plugin:3.1.3; do
  if [[ ! -d "$HOME/.m2/repository/org/apache/maven/plugins/${plugin%%:*}/${plugin##*:}" ]]; then
    echo "setup-java: resolving org.apache.maven.plugins:$plugin"
    if ! mvn -B -q dependency:get -Dartifact="org.apache.maven.plugins:$plugin" >"$empty/get.log" 2>&1; then
      sed 's/\x1b\[[0-9;]*m//g' "$empty/get.log" | tail -n 20 >&2
      echo "setup-java: mvn dependency:get org.apache.maven.plugins:$plugin failed; its last lines are above" >&2
      exit 1
    fi
  fi
done
echo "setup-java: $summary ($classifier) in the local Maven repository"
