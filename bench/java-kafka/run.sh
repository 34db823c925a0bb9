#!/usr/bin/env bash
# make bench-java-kafka, on one throwaway broker (scripts/with-kafka.sh):
#  1. the Java Kafka loop (KafkaConsumerLoop) with its default batchSize
#     against batchSize 1 (a transaction per delivery), on the same records,
#     side by side; see runtime-java/kafka/src/test/java/io/msgcontract/kafka/LoopBench.java;
#  2. the Spring Boot starter's @ContractListener against the plain loop, on
#     the same records ("ratio spring/java-loop=X"); see
#     runtime-java/spring-kafka/src/test/java/io/msgcontract/spring/kafka/SpringBench.java.
# Arguments go to both: -n RECORDS (LoopBench 10000, SpringBench 20000 by
# default), -rounds R (default 3).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/install-runtime-java.sh # msgcontract-runtime, which the loop depends on
mod=runtime-java/kafka
echo "bench-java-kafka: compiling $mod and its test classes"
mvn -B -q -Dstyle.color=never -f "$mod/pom.xml" test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath
cp="$mod/target/classes:$mod/target/test-classes:$(cat "$mod/target/bench.classpath")"
# The starter and the kafka module it runs on, into ~/.m2, then its test classes.
bash scripts/install-spring-kafka.sh
smod=runtime-java/spring-kafka
echo "bench-java-kafka: compiling $smod and its test classes"
mvn -B -q -Dstyle.color=never -f "$smod/pom.xml" test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath
scp="$smod/target/classes:$smod/target/test-classes:$(cat "$smod/target/bench.classpath")"
exec bash scripts/with-kafka.sh bash -c 'java -cp "$1" io.msgcontract.kafka.LoopBench "${@:3}" && java -cp "$2" io.msgcontract.spring.kafka.SpringBench "${@:3}"' _ "$cp" "$scp" "$@"
