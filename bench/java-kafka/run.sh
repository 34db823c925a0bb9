#!/usr/bin/env bash
# make bench-java-kafka: the Java Kafka loop (KafkaConsumerLoop) with its
# default batchSize against batchSize 1 (a transaction per delivery), on the
# same records of a throwaway broker (scripts/with-kafka.sh), side by side in
# one run; see runtime-java/kafka/src/test/java/io/msgcontract/kafka/LoopBench.java.
# Arguments go to LoopBench: -n RECORDS (default 5000), -rounds R (default 3).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/install-runtime-java.sh # msgcontract-runtime, which the loop depends on
mod=runtime-java/kafka
echo "bench-java-kafka: compiling $mod and its test classes"
mvn -B -q -Dstyle.color=never -f "$mod/pom.xml" test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath
cp="$mod/target/classes:$mod/target/test-classes:$(cat "$mod/target/bench.classpath")"
exec bash scripts/with-kafka.sh java -cp "$cp" io.msgcontract.kafka.LoopBench "$@"
