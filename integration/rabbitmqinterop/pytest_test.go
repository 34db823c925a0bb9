//go:build rabbitmq

package rabbitmqinterop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
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
	dir := filepath.Join(root, "runtime-python")
	files, err := filepath.Glob(filepath.Join(dir, "tests_rabbitmq", "test_*.py"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	want := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want += len(regexp.MustCompile(`(?m)^def test_`).FindAll(b, -1))
	}
	py := filepath.Join(root, ".venv", "bin", "python")
	cmd := exec.Command(py, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-rs", "tests_rabbitmq")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH=src"+string(os.PathListSeparator)+"tests_rabbitmq")
	out, err := cmd.CombinedOutput()
	t.Logf("pytest:\n%s", out)
	if err != nil {
		t.Fatalf("pytest: %v", err)
	}
	m := regexp.MustCompile(`(?m)^(\d+) passed`).FindSubmatch(out)
	if m == nil {
		t.Fatal("pytest printed no 'N passed' line")
	}
	if n, _ := strconv.Atoi(string(m[1])); n != want {
		t.Fatalf("pytest passed %d tests, the files hold %d", n, want)
	}
	if regexp.MustCompile(`\d+ (skipped|failed|error)`).Match(out) {
		t.Fatal("pytest skipped or failed tests")
	}
	d := regexp.MustCompile(`(?m)python-rabbitmq-retry-delays: (.*)$`).FindSubmatch(out)
	if d == nil {
		t.Fatal("test_retry_delays printed no python-rabbitmq-retry-delays line")
	}
	// internal/testsummary's marker: the line goes to make test's final report.
	t.Logf("msgcontract-suite python-rabbitmq-retry-delays: %s", d[1])
}
