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
		t.Fatalf("mvn install in runtime-java/rabbitmq: %v\n%s", err, tail(out, 80))
	}
	// Surefire's reports count what ran: a test class Maven did not find
	// would otherwise pass as "nothing failed".
	ran, skipped := surefire(t, reports)
	want := declaredTests(t, filepath.Join(mod, "src", "test", "java"))
	if ran != want || skipped != 0 {
		t.Fatalf("%d JUnit tests ran, %d skipped; the sources declare %d\n%s", ran, skipped, want, tail(out, 40))
	}
	// RetryDelayTest's stdout goes to its surefire -output.txt (redirected) or Maven's log.
	text := out
	if b, err := os.ReadFile(filepath.Join(reports, "io.msgcontract.rabbitmq.RetryDelayTest-output.txt")); err == nil {
		text = append(text, b...)
	}
	m := delayLine.FindSubmatch(text)
	if m == nil {
		t.Fatalf("RetryDelayTest printed no java-rabbitmq-retry-delays line\n%s", tail(out, 40))
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

var suiteAttrs = regexp.MustCompile(`<testsuite [^>]*tests="(\d+)"[^>]*skipped="(\d+)"`)

func surefire(t *testing.T, dir string) (ran, skipped int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "TEST-*.xml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no surefire report in %s (%v)", dir, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := suiteAttrs.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no <testsuite tests= skipped=>", f)
		}
		n, _ := strconv.Atoi(string(m[1]))
		s, _ := strconv.Atoi(string(m[2]))
		ran, skipped = ran+n, skipped+s
	}
	return ran, skipped
}

var testAnnotation = regexp.MustCompile(`(?m)^\s*@Test\b`)

func declaredTests(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".java" {
			return err
		}
		b, err := os.ReadFile(p)
		n += len(testAnnotation.FindAll(b, -1))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func tail(b []byte, n int) []byte {
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}
