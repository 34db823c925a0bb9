#!/usr/bin/env bash
# scripts/dist/check-maven.sh DIST_DIR (run by make release-check) resolves
# io.msgcontract:msgcontract-runtime-kafka, msgcontract-runtime-rabbitmq,
# msgcontract-runtime-rocketmq and msgcontract-runtime-micrometer $VERSION (default: the VERSION
# file) as a user's project would: a throwaway Maven project in a temporary
# directory names file://DIST_DIR/maven as a repository, with an empty local
# repository (third-party artifacts from Maven Central, io.msgcontract ones
# from DIST_DIR/maven only), compiles a class using
# io.msgcontract.support.Version, io.msgcontract.kafka.KafkaConsumerLoop,
# io.msgcontract.rabbitmq.RabbitConsumerLoop,
# io.msgcontract.rocketmq.RocketConsumerLoop and
# io.msgcontract.micrometer.MicrometerMetrics (counting one outcome on a
# Micrometer SimpleMeterRegistry), and runs it on the resolved class path. Prints
#   release-check: maven resolve from dist/maven: ok
# and exits non-zero on any failure. Needs a JDK 17, Maven 3.8+ and Maven
# Central.
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: $0 DIST_DIR (the directory make dist wrote, holding maven/)" >&2
  exit 2
fi
dist="$(cd "$1" && pwd)" || { echo "release-check: maven: no directory $1" >&2; exit 2; }
cd "$(dirname "$0")/../.."
VERSION="${VERSION:-$(cat VERSION)}"
fail() { echo "release-check: maven resolve from $1/maven: FAILED: $2" >&2; exit 1; }
for a in msgcontract-runtime-kafka msgcontract-runtime-rabbitmq msgcontract-runtime-rocketmq msgcontract-runtime-micrometer; do
  [[ -f "$dist/maven/io/msgcontract/$a/$VERSION/$a-$VERSION.pom" ]] ||
    fail "$1" "no io/msgcontract/$a/$VERSION in it; run make dist VERSION=$VERSION first"
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
proj="$tmp/project"
repo="$tmp/m2"
mkdir -p "$proj/src/main/java/check" "$repo"
cat >"$proj/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>check</groupId>
  <artifactId>msgcontract-release-check</artifactId>
  <version>1</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <repositories>
    <repository>
      <id>msgcontract-dist</id>
      <url>file://$dist/maven</url>
    </repository>
  </repositories>
  <dependencies>
    <dependency>
      <groupId>io.msgcontract</groupId>
      <artifactId>msgcontract-runtime-kafka</artifactId>
      <version>$VERSION</version>
    </dependency>
    <dependency>
      <groupId>io.msgcontract</groupId>
      <artifactId>msgcontract-runtime-rabbitmq</artifactId>
      <version>$VERSION</version>
    </dependency>
    <dependency>
      <groupId>io.msgcontract</groupId>
      <artifactId>msgcontract-runtime-rocketmq</artifactId>
      <version>$VERSION</version>
    </dependency>
    <dependency>
      <groupId>io.msgcontract</groupId>
      <artifactId>msgcontract-runtime-micrometer</artifactId>
      <version>$VERSION</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-resources-plugin</artifactId>
        <version>3.3.1</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.13.0</version>
      </plugin>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>3.8.1</version>
      </plugin>
    </plugins>
  </build>
</project>
EOF
# Version.RUNTIME is a compile-time constant: read through reflection, it is
# the resolved jar's. Loading KafkaConsumerLoop links kafka-clients,
# RabbitConsumerLoop amqp-client, RocketConsumerLoop rocketmq-client-java; MicrometerMetrics counts one outcome on
# micrometer-core (a dependency of its POM).
cat >"$proj/src/main/java/check/Main.java" <<'EOF'
package check;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.msgcontract.kafka.KafkaConsumerLoop;
import io.msgcontract.micrometer.MicrometerMetrics;
import io.msgcontract.rabbitmq.RabbitConsumerLoop;
import io.msgcontract.rocketmq.RocketConsumerLoop;
import io.msgcontract.support.Decision;
import io.msgcontract.support.Observer;
import io.msgcontract.support.Version;

public final class Main {
  public static void main(String[] args) throws Exception {
    String runtime = (String) Version.class.getField("RUNTIME").get(null);
    Version.require(args[0], Main.class);
    Class<?> loop = Class.forName(KafkaConsumerLoop.class.getName(), true, Main.class.getClassLoader());
    Class.forName("org.apache.kafka.clients.consumer.KafkaConsumer");
    Class<?> rabbit = Class.forName(RabbitConsumerLoop.class.getName(), true, Main.class.getClassLoader());
    Class.forName("com.rabbitmq.client.ConnectionFactory");
    Class<?> rocket = Class.forName(RocketConsumerLoop.class.getName(), true, Main.class.getClassLoader());
    Class.forName("org.apache.rocketmq.client.apis.ClientServiceProvider");
    if (Version.class.getClassLoader().getResource("msgcontract/v1/options.proto") == null) {
      throw new IllegalStateException("msgcontract/v1/options.proto is not on the class path");
    }
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MicrometerMetrics metrics = new MicrometerMetrics(registry);
    metrics.observe(new Observer.Outcome("h", "t", "E", null, new Decision.Ack(false), 0.001));
    if (registry.get("msgcontract.messages.processed").counter().count() != 1.0) {
      throw new IllegalStateException("MicrometerMetrics did not count the outcome");
    }
    System.out.println("runtime " + runtime + ", " + loop.getSimpleName() + ", " + rabbit.getSimpleName()
        + ", " + rocket.getSimpleName() + " and " + metrics.getClass().getSimpleName() + " loaded");
  }
}
EOF
if ! (cd "$proj" && mvn -B -Dstyle.color=never -Dmaven.repo.local="$repo" compile dependency:build-classpath \
  -Dmdep.outputFile="$tmp/classpath.txt" >"$tmp/mvn.log" 2>&1); then
  grep -E '^\[(ERROR|WARNING)\]' "$tmp/mvn.log" | tail -n 30 >&2
  fail "$1" "mvn compile of a project depending on io.msgcontract:msgcontract-runtime-kafka, -rabbitmq, -rocketmq and -micrometer:$VERSION (errors above)"
fi
# Every io.msgcontract artifact came from the dist repository.
for a in msgcontract-runtime-parent msgcontract-runtime msgcontract-runtime-kafka msgcontract-runtime-rabbitmq msgcontract-runtime-rocketmq msgcontract-runtime-micrometer; do
  grep -q '>msgcontract-dist=' "$repo/io/msgcontract/$a/$VERSION/_remote.repositories" 2>/dev/null ||
    fail "$1" "io.msgcontract:$a:$VERSION was not resolved from it (see $a/$VERSION/_remote.repositories)"
done
# stdout only: amqp-client logs through SLF4J, which warns on stderr that
# no binding is on the class path (an application brings its own).
if ! out="$(java -cp "$proj/target/classes:$(cat "$tmp/classpath.txt")" check.Main "$VERSION" 2>"$tmp/java.err")"; then
  echo "$out" >&2
  cat "$tmp/java.err" >&2
  fail "$1" "the compiled class did not run on the resolved class path (above)"
fi
[[ "$out" == "runtime $VERSION, KafkaConsumerLoop, RabbitConsumerLoop, RocketConsumerLoop and MicrometerMetrics loaded" ]] || fail "$1" "the class printed \"$out\", not runtime $VERSION"
echo "release-check: maven $out"
echo "release-check: maven resolve from $1/maven: ok"
