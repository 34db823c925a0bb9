// Package javarabbitmq holds the test that runs runtime-java/rabbitmq's JUnit
// suite (io.msgcontract:msgcontract-runtime-rabbitmq) against a real broker:
// it builds the msgcontract CLI and the Go peer the suite starts
// (./rabbitmqpeer, runtime-go's rabbitmq transport), runs `mvn install` with
// the broker's URL, checks that every @Test ran and none was skipped, and
// reports the count as the java-rabbitmq suite and the suite's retry-delay
// line as java-rabbitmq-retry-delays. Build tag rabbitmq; `make
// test-java-rabbitmq` runs it under scripts/with-rabbitmq.sh.
package javarabbitmq
