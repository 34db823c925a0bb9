//go:build kafka

package kafkainterop_test

import (
	"testing"

	"github.com/msgcontract/msgcontract/internal/pytestsuite"
)

// TestPythonKafkaSuite runs runtime-python/tests_kafka (KafkaConsumerLoop and
// KafkaPublisher on the broker: duplicates, retry then success, poison, two
// members, outbox on PostgreSQL, SIGKILL mid-batch, a member SIGKILLed
// between its retry publish and its commit (one retry chain per message);
// the same and the asyncio fault cases for AsyncConsumer on aio.kafka,
// a retry copy published twice; Confluent-framed
// records against msgcontract's registry, started here, whose look-ups fail
// for a while) with pytest, and checks that every test function ran and
// passed: none skipped, none missing.
func TestPythonKafkaSuite(t *testing.T) {
	t.Parallel() // beside TestRetryChainPythonDiesGoTakesOver, which mostly waits
	reg, _ := startRegistry(t)
	pytestsuite.Run(t, root, "tests_kafka", []string{"MSGCONTRACT_REGISTRY_URL=" + reg})
}
