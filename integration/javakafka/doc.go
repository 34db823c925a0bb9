// Package javakafka holds the test that runs runtime-java/kafka's JUnit
// suite (io.msgcontract:msgcontract-runtime-kafka) against a real broker:
// it builds the msgcontract CLI and the Go consumer the suite starts
// (runtime-go/bench/kafkapeer), serves msgcontract's registry in-process and
// publishes records runtime-go frames in the Confluent wire format for the
// suite to read (their URL and namespace go to Maven in MSGCONTRACT_REGISTRY_URL
// and MSGCONTRACT_KAFKA_GO_FRAMED_NS), runs `mvn install`, checks that every @Test
// ran and none was skipped, and reports the count as the java-kafka suite.
// Build tag kafka; `make test-java-kafka` runs it under scripts/with-kafka.sh.
package javakafka
