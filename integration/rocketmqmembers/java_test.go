//go:build rocketmq

package rocketmqmembers_test

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/msgcontract/msgcontract/internal/surefire"
	"github.com/msgcontract/msgcontract/internal/testsummary"
)

// delayLine is what RetryDelayTest prints.
var delayLine = regexp.MustCompile(`(?m)^java-rocketmq-retry-delays-handler: (.+)$`)

func TestJavaRocketMQ(t *testing.T) {
	text, ran := surefire.Install(t, filepath.Join(root, "runtime-java", "rocketmq"), binEnv,
		"io.msgcontract.rocketmq.RetryDelayTest-output.txt")
	m := delayLine.FindSubmatch(text)
	if m == nil {
		t.Fatalf("RetryDelayTest printed no java-rocketmq-retry-delays-handler line\n%s", surefire.Tail(text, 40))
	}
	testsummary.Report(t, "java-rocketmq", strconv.Itoa(ran)+" tests")
	testsummary.Report(t, "java-rocketmq-retry-delays", string(bytes.TrimSpace(m[1])))
}
