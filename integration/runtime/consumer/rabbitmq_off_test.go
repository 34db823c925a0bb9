//go:build !rabbitmq

package consumer_test

// Without -tags rabbitmq the RabbitMQ entries are not built: make
// test-rabbitmq runs them against a real broker (see rabbitmq_on_test.go).

func rabbitmqMatrix() []matrixEntry { return nil }
