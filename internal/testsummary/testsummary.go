// Package testsummary turns the event stream of `go test -json` into the
// short report `make test` ends with: one line per suite, such as
// "go: 412 passed, 0 skipped, 0 failed", and the output of the tests
// that failed or skipped, so that neither can go unnoticed.
//
// Suites that run inside a Go test (JUnit under Maven, pytest) report
// their own line with Report; Summarize picks those lines out of the test
// output, so they reach the summary without a second channel.
package testsummary

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// marker starts a line a test reports for its suite.
const marker = "msgcontract-suite "

// suiteLine matches what Report writes, wherever testing puts it in the
// output (after "    file_test.go:12: ").
var suiteLine = regexp.MustCompile(marker + `([a-z0-9-]+): (.+)$`)

// Report logs line as the summary line of suite (say "java", with line
// "7 tests"). Summarize collects it; under plain `go test` it is an
// ordinary log line.
func Report(tb testing.TB, suite, line string) {
	tb.Helper()
	tb.Logf("%s%s: %s", marker, suite, line)
}

// Result is what one `go test -json` run amounted to.
type Result struct {
	Suite   string
	Passed  int
	Skipped []Test
	Failed  []Test
	// Failures that belong to no test: a package that does not build, a
	// test binary that panicked outside a test, a malformed event line.
	Broken []string
	// Reported holds the lines tests reported for other suites, by suite.
	Reported map[string]string
}

// Test is one test (or subtest) that did not simply pass.
type Test struct {
	Package, Name string
	// Output is everything the test printed, its skip reason included.
	Output string
}

// Line is the suite's summary line.
func (r *Result) Line() string {
	line := fmt.Sprintf("%s: %d passed, %d skipped, %d failed", r.Suite, r.Passed, len(r.Skipped), len(r.Failed))
	if len(r.Broken) > 0 {
		line += fmt.Sprintf(", %d packages broken", len(r.Broken))
	}
	return line
}

// OK reports whether the run passes: nothing failed or broke and, when
// strict (under CI), nothing skipped either.
func (r *Result) OK(strict bool) bool {
	return len(r.Failed) == 0 && len(r.Broken) == 0 && (!strict || len(r.Skipped) == 0)
}

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	// ImportPath names the package of build output; FailedBuild, on a
	// package's fail event, the build that failed.
	ImportPath  string
	FailedBuild string
	Elapsed     float64 // seconds
}

// Summarize reads the events of `go test -json` from r. It writes a
// progress line per package to progress as each one ends, and the output
// of every failed test. A line that is not JSON (go vet, a crash before
// the first event) is passed through and counted as broken.
func Summarize(suite string, r io.Reader, progress io.Writer) (*Result, error) {
	res := &Result{Suite: suite, Reported: map[string]string{}}
	output := map[string]*strings.Builder{} // by package + "\x00" + test
	buildOut := map[string]*strings.Builder{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		raw := sc.Bytes()
		var ev event
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &ev) != nil {
			fmt.Fprintf(progress, "%s\n", raw)
			res.Broken = append(res.Broken, string(raw))
			continue
		}
		key := ev.Package + "\x00" + ev.Test
		switch ev.Action {
		case "build-output":
			b := buildOut[ev.ImportPath]
			if b == nil {
				b = &strings.Builder{}
				buildOut[ev.ImportPath] = b
			}
			b.WriteString(ev.Output)
		case "output":
			if m := suiteLine.FindStringSubmatch(strings.TrimRight(ev.Output, "\n")); m != nil {
				res.Reported[m[1]] = m[2]
			}
			b := output[key]
			if b == nil {
				b = &strings.Builder{}
				output[key] = b
			}
			b.WriteString(ev.Output)
		case "pass":
			if ev.Test != "" {
				res.Passed++
			} else {
				fmt.Fprintf(progress, "ok    %s %.1fs\n", ev.Package, ev.Elapsed)
			}
			delete(output, key)
		case "skip":
			if ev.Test != "" {
				res.Skipped = append(res.Skipped, Test{ev.Package, ev.Test, text(output[key])})
			}
			delete(output, key)
		case "fail":
			if ev.Test != "" {
				t := Test{ev.Package, ev.Test, text(output[key])}
				res.Failed = append(res.Failed, t)
				fmt.Fprintf(progress, "--- FAIL: %s (%s)\n%s", t.Name, t.Package, t.Output)
			} else {
				fmt.Fprintf(progress, "FAIL  %s %.1fs\n", ev.Package, ev.Elapsed)
				// A package fails without a failed test when it does not
				// build or its binary dies outside a test.
				if !hasFailedTest(res.Failed, ev.Package) {
					why := text(buildOut[ev.FailedBuild]) + text(output[key])
					fmt.Fprint(progress, why)
					res.Broken = append(res.Broken, ev.Package+": "+strings.TrimSpace(why))
				}
			}
			delete(output, key)
		}
	}
	if err := sc.Err(); err != nil {
		return res, fmt.Errorf("testsummary: reading go test -json: %w", err)
	}
	sort.Slice(res.Skipped, func(i, j int) bool { return res.Skipped[i].Name < res.Skipped[j].Name })
	return res, nil
}

func hasFailedTest(failed []Test, pkg string) bool {
	for _, t := range failed {
		if t.Package == pkg {
			return true
		}
	}
	return false
}

func text(b *strings.Builder) string {
	if b == nil {
		return ""
	}
	return b.String()
}
