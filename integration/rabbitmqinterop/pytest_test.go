//go:build rabbitmq

package rabbitmqinterop_test

import (
	"regexp"
	"testing"

	"github.com/msgcontract/msgcontract/internal/pytestsuite"
)

// TestPythonRabbitMQSuite runs runtime-python/tests_rabbitmq
// (RabbitMQConsumerLoop, RabbitMQPublisher, the dead-letter store and the
// outbox relay on the node scripts/with-rabbitmq.sh started: duplicates,
// retries on schedule, deferral, dead letters, replay and purge, SIGKILL
// mid-batch, the retry-delay measurement, the asyncio loop) with pytest, and
// checks that every test function ran and passed: none skipped, none
// missing. The retry-delay measurement's line goes to the suite summary
// (python-rabbitmq-retry-delays.txt, through testsummary's marker).
func TestPythonRabbitMQSuite(t *testing.T) {
	out := pytestsuite.Run(t, root, "tests_rabbitmq", nil, "-s")
	d := regexp.MustCompile(`(?m)python-rabbitmq-retry-delays: (.*)$`).FindSubmatch(out)
	if d == nil {
		t.Fatal("test_retry_delays printed no python-rabbitmq-retry-delays line")
	}
	// internal/testsummary's marker: the line goes to make test's final report.
	t.Logf("msgcontract-suite python-rabbitmq-retry-delays: %s", d[1])
}
