//go:build rocketmq

package rocketmqmembers_test

import (
	"regexp"
	"testing"

	"github.com/msgcontract/msgcontract/internal/pytestsuite"
	"github.com/msgcontract/msgcontract/internal/testsummary"
)

// delaysFile is the Python suite's timing measurement, run on its own.
const delaysFile = "test_rocketmq_delays.py"

// TestPythonRocketMQ runs runtime-python/tests_rocketmq but its delay
// measurement (RocketMQConsumerLoop and RocketMQPublisher on the broker:
// duplicates, retries on the schedule then dead letters listed by dlq
// --rocketmq, a body that is no envelope, FIFO groups, the transactional
// producer, Go publishing to Python and Python to Go). HOME is a temporary
// directory: the client writes its log under ~/logs on import.
func TestPythonRocketMQ(t *testing.T) {
	pytestsuite.RunFiles(t, root, "tests_rocketmq", func(name string) bool { return name != delaysFile },
		append([]string{"HOME=" + t.TempDir()}, binEnv...), "-s")
}

// TestPythonRocketMQDelays runs the 1,000 retry delays through the broker's
// timer (tests_rocketmq/test_rocketmq_delays.py) and reports its figures:
// make test runs it with no other suite beside it, as the RabbitMQ delays
// run, so that it measures the member's loop rather than how many suites
// share the machine's two cores (docs/rocketmq.md, Retry delays).
func TestPythonRocketMQDelays(t *testing.T) {
	out := pytestsuite.RunFiles(t, root, "tests_rocketmq", func(name string) bool { return name == delaysFile },
		append([]string{"HOME=" + t.TempDir()}, binEnv...), "-s")
	// The handler-start figure, and beside it when the loop had each copy
	// ready (Go's figure, taken at Fetch) with how early the copies arrived.
	for _, suite := range []string{"python-rocketmq-retry-delays", "python-rocketmq-retry-delays-ready"} {
		d := regexp.MustCompile(`(?m)^` + suite + `: (.*)$`).FindSubmatch(out)
		if d == nil {
			t.Fatalf("test_retry_delays printed no %s line", suite)
		}
		testsummary.Report(t, suite, string(d[1]))
	}
}
