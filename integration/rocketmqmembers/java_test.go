//go:build rocketmq

package javarocketmq_test

import (
	"bytes"
	"os"
	"os/exec"
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
	for _, v := range []string{"MSGCONTRACT_ROCKETMQ_PROXY", "MSGCONTRACT_ROCKETMQ_NAMESRV", "MSGCONTRACT_ROCKETMQ_BROKER"} {
		if os.Getenv(v) == "" {
			t.Fatalf("%s is not set: run under scripts/with-rocketmq.sh (make test-java-rocketmq)", v)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	// msgcontract hands dlq to msgcontract-ops, which it finds beside it.
	run(t, root, "go", "build", "-o", filepath.Join(bin, "msgcontract"), "./cmd/msgcontract")
	run(t, root, "go", "build", "-o", filepath.Join(bin, "msgcontract-ops"), "./cmd/msgcontract-ops")
	run(t, root, "go", "build", "-tags", "rocketmq", "-o", filepath.Join(bin, "rocketmqpeer"), "./integration/javarocketmq/rocketmqpeer")

	text, ran := surefire.Install(t, filepath.Join(root, "runtime-java", "rocketmq"), []string{
		"MSGCONTRACT_BIN=" + filepath.Join(bin, "msgcontract"), "MSGCONTRACT_ROCKETMQ_GO_PEER=" + filepath.Join(bin, "rocketmqpeer")},
		"io.msgcontract.rocketmq.RetryDelayTest-output.txt")
	m := delayLine.FindSubmatch(text)
	if m == nil {
		t.Fatalf("RetryDelayTest printed no java-rocketmq-retry-delays-handler line\n%s", surefire.Tail(text, 40))
	}
	testsummary.Report(t, "java-rocketmq", strconv.Itoa(ran)+" tests")
	testsummary.Report(t, "java-rocketmq-retry-delays", string(bytes.TrimSpace(m[1])))
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
