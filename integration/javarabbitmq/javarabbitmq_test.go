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

	mod := filepath.Join(root, "runtime-java", "rabbitmq")
	reports := filepath.Join(mod, "target", "surefire-reports")
	if err := os.RemoveAll(reports); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("mvn", "-B", "-Dstyle.color=never", "install")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "MSGCONTRACT_BIN="+filepath.Join(bin, "msgcontract"),
		"MSGCONTRACT_RABBITMQ_GO_PEER="+filepath.Join(bin, "rabbitmqpeer"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mvn install in runtime-java/rabbitmq: %v\n%s", err, surefire.Tail(out, 80))
	}
	// Surefire's reports count what ran: a test class Maven did not find
	// would otherwise pass as "nothing failed".
	ran, skipped := surefire.Reports(t, reports)
	want := surefire.Declared(t, filepath.Join(mod, "src", "test", "java"))
	if ran != want || skipped != 0 {
		t.Fatalf("%d JUnit tests ran, %d skipped; the sources declare %d\n%s", ran, skipped, want, surefire.Tail(out, 40))
	}
	// RetryDelayTest's stdout goes to its surefire -output.txt (redirected) or Maven's log.
	text := out
	if b, err := os.ReadFile(filepath.Join(reports, "io.msgcontract.rabbitmq.RetryDelayTest-output.txt")); err == nil {
		text = append(text, b...)
	}
	m := delayLine.FindSubmatch(text)
	if m == nil {
		t.Fatalf("RetryDelayTest printed no java-rabbitmq-retry-delays line\n%s", surefire.Tail(out, 40))
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
