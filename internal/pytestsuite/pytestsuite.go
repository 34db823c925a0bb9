// Package pytestsuite runs one of runtime-python's pytest directories for
// the Go tests that drive the Python runtime against a real broker
// (integration/kafkainterop, integration/rabbitmqinterop,
// integration/rocketmqpython), and checks that every test function the
// files declare ran and passed: a test pytest did not collect, or one it
// skipped, would otherwise pass as "nothing failed".
package pytestsuite

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

var (
	testFunc = regexp.MustCompile(`(?m)^def test_`)
	passed   = regexp.MustCompile(`(?m)^(\d+) passed`)
	bad      = regexp.MustCompile(`\d+ (skipped|failed|error)`)
)

// Declared counts the module-level test functions of dir's test_*.py
// files; it fails tb when there is none.
func Declared(tb testing.TB, dir string) int {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "test_*.py"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no test files in %s: %v", dir, err)
	}
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		n += len(testFunc.FindAll(b, -1))
	}
	return n
}

// Run runs pytest on runtime-python/tests (tests is the directory's name,
// e.g. "tests_kafka") with root's .venv, PYTHONPATH src and tests, env
// added to this process's environment and more pytest arguments, logs its
// output, and fails tb unless every declared test passed. It returns the
// output.
func Run(tb testing.TB, root, tests string, env []string, more ...string) []byte {
	tb.Helper()
	dir := filepath.Join(root, "runtime-python")
	want := Declared(tb, filepath.Join(dir, tests))
	args := append([]string{"-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"}, more...)
	cmd := exec.Command(filepath.Join(root, ".venv", "bin", "python"), append(args, tests)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH=src"+string(os.PathListSeparator)+tests)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	tb.Logf("pytest:\n%s", out)
	if err != nil {
		tb.Fatalf("pytest %s: %v", tests, err)
	}
	m := passed.FindSubmatch(out)
	if m == nil {
		tb.Fatalf("pytest %s printed no 'N passed' line", tests)
	}
	if n, _ := strconv.Atoi(string(m[1])); n != want {
		tb.Fatalf("pytest %s passed %d tests, the files hold %d", tests, n, want)
	}
	if bad.Match(out) {
		tb.Fatalf("pytest %s skipped or failed tests", tests)
	}
	return out
}
