//go:build kafka

package kafkainterop_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
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
	dir := filepath.Join(root, "runtime-python")
	files, err := filepath.Glob(filepath.Join(dir, "tests_kafka", "test_*.py"))
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
	cmd := exec.Command(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "tests_kafka")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH=src"+string(os.PathListSeparator)+"tests_kafka",
		"MSGCONTRACT_REGISTRY_URL="+reg)
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
}
