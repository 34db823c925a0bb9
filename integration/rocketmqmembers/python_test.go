//go:build rocketmq

package rocketmqmembers_test

import (
	"regexp"
	"testing"

	"github.com/msgcontract/msgcontract/internal/pytestsuite"
	"github.com/msgcontract/msgcontract/internal/testsummary"
)

// TestPythonRocketMQ runs runtime-python/tests_rocketmq
// (RocketMQConsumerLoop and RocketMQPublisher on the broker: duplicates,
// retries on the schedule then dead letters listed by dlq --rocketmq, a
// body that is no envelope, Go publishing to Python and Python to Go, and
// 1,000 retry delays through the broker's timer). HOME is a temporary
// directory: the client writes its log under ~/logs on import.
func TestPythonRocketMQ(t *testing.T) {
	out := pytestsuite.Run(t, root, "tests_rocketmq", append([]string{"HOME=" + t.TempDir()}, binEnv...), "-s")
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
