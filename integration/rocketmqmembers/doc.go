// Package javarocketmq holds the test that runs runtime-java/rocketmq's JUnit
// suite (io.msgcontract:msgcontract-runtime-rocketmq) against a real RocketMQ
// 5.x: it builds the msgcontract CLI and the Go peer the suite starts
// (./rocketmqpeer, runtime-go's rocketmq transport), runs `mvn install` with
// the proxy's and name server's addresses, checks that every @Test ran and
// none was skipped, and reports the count as the java-rocketmq suite and the
// suite's retry-delay line as java-rocketmq-retry-delays. Build tag
// rocketmq; `make test-java-rocketmq` runs it under scripts/with-rocketmq.sh.
package javarocketmq
