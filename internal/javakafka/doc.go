// Package javakafka holds the test that runs runtime-java-kafka's JUnit
// suite (io.msgcontract:msgcontract-runtime-kafka) against a real broker:
// it builds the msgcontract CLI and the Go consumer the suite starts
// (runtime-go/bench/kafkapeer), runs `mvn install`, checks that every @Test
// ran and none was skipped, and reports the count as the java-kafka suite.
// Build tag kafka; `make test-java-kafka` runs it under scripts/with-kafka.sh.
package javakafka
