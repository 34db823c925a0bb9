// Package rocketmqmembers holds the tests that run the Java and Python
// RocketMQ members' suites against a real RocketMQ 5.x (run under
// scripts/with-rocketmq.sh, build tag rocketmq):
//
//   - TestJavaRocketMQ runs runtime-java/rocketmq's JUnit suite
//     (io.msgcontract:msgcontract-runtime-rocketmq) with `mvn install`,
//     checks that every @Test ran and none was skipped, and reports the
//     java-rocketmq and java-rocketmq-retry-delays suite lines (make
//     test-java-rocketmq);
//   - TestPythonRocketMQ runs runtime-python/tests_rocketmq with pytest but
//     its delay measurement, and checks that every test function passed
//     (make test-rocketmq-python, the rocketmq-python line);
//   - TestPythonRocketMQDelays runs that measurement alone and reports the
//     python-rocketmq-retry-delays lines (make test-rocketmq-python-delays).
//
// Both suites use the msgcontract CLI and the Go peer (./rocketmqpeer,
// runtime-go's rocketmq transport, which also creates their topics: the 5.x
// clients cannot), which TestMain builds once.
package rocketmqmembers
