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

// declared counts the module-level test functions of files.
func declared(tb testing.TB, files []string) int {
	tb.Helper()
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

// files lists dir's test_*.py files that keep takes (every one when keep
// is nil), by path; it fails tb when there is none.
func files(tb testing.TB, dir string, keep func(name string) bool) []string {
	tb.Helper()
	all, err := filepath.Glob(filepath.Join(dir, "test_*.py"))
	if err != nil {
		tb.Fatalf("listing the test files of %s: %v", dir, err)
	}
	var kept []string
	for _, f := range all {
		if keep == nil || keep(filepath.Base(f)) {
			kept = append(kept, f)
		}
	}
	if len(kept) == 0 {
		tb.Fatalf("no test files in %s (of %d test_*.py files, none selected)", dir, len(all))
	}
	return kept
}

// Run runs pytest on runtime-python/tests (tests is the directory's name,
// e.g. "tests_kafka") with root's .venv, PYTHONPATH src and tests, env
// added to this process's environment and more pytest arguments, logs its
// output, and fails tb unless every declared test passed. It returns the
// output.
func Run(tb testing.TB, root, tests string, env []string, more ...string) []byte {
	tb.Helper()
	return RunFiles(tb, root, tests, nil, env, more...)
}

// RunFiles is Run on the test files of tests that keep takes, by file name
// (e.g. "test_rocketmq_delays.py"): a suite whose timing figure wants the
// machine to itself runs apart from the rest of its directory. Every test
// function of the files kept must pass.
func RunFiles(tb testing.TB, root, tests string, keep func(name string) bool, env []string, more ...string) []byte {
	tb.Helper()
	dir := filepath.Join(root, "runtime-python")
	run := files(tb, filepath.Join(dir, tests), keep)
	want := declared(tb, run)
	args := append([]string{"-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"}, more...)
	for _, f := range run {
		args = append(args, filepath.Join(tests, filepath.Base(f)))
	}
	cmd := exec.Command(filepath.Join(root, ".venv", "bin", "python"), args...)
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
		tb.Fatalf("pytest %s passed %d tests, the files run hold %d", tests, n, want)
	}
	if bad.Match(out) {
		tb.Fatalf("pytest %s skipped or failed tests", tests)
	}
	return out
}
