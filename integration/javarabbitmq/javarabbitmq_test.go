//go:build rabbitmq

package javarabbitmq_test

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
var delayLine = regexp.MustCompile(`(?m)^java-rabbitmq-retry-delays: (.+)$`)

func TestJavaRabbitMQ(t *testing.T) {
	url := os.Getenv("MSGCONTRACT_TEST_RABBITMQ")
	if url == "" {
		t.Fatal("MSGCONTRACT_TEST_RABBITMQ is not set: run under scripts/with-rabbitmq.sh (make test-java-rabbitmq)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	// msgcontract hands dlq to msgcontract-ops, which it finds beside it.
	run(t, root, "go", "build", "-o", filepath.Join(bin, "msgcontract"), "./cmd/msgcontract")
	run(t, root, "go", "build", "-o", filepath.Join(bin, "msgcontract-ops"), "./cmd/msgcontract-ops")
	run(t, root, "go", "build", "-tags", "rabbitmq", "-o", filepath.Join(bin, "rabbitmqpeer"), "./integration/javarabbitmq/rabbitmqpeer")

	text, ran := surefire.Install(t, filepath.Join(root, "runtime-java", "rabbitmq"), []string{
		"MSGCONTRACT_BIN=" + filepath.Join(bin, "msgcontract"), "MSGCONTRACT_RABBITMQ_GO_PEER=" + filepath.Join(bin, "rabbitmqpeer")},
		"io.msgcontract.rabbitmq.RetryDelayTest-output.txt")
	m := delayLine.FindSubmatch(text)
	if m == nil {
		t.Fatalf("RetryDelayTest printed no java-rabbitmq-retry-delays line\n%s", surefire.Tail(text, 40))
	}
	testsummary.Report(t, "java-rabbitmq", strconv.Itoa(ran)+" tests")
	testsummary.Report(t, "java-rabbitmq-retry-delays", string(bytes.TrimSpace(m[1])))
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
