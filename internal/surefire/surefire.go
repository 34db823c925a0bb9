// Package surefire checks what a Maven build's JUnit suite ran against what
// its sources declare, for the Go tests that run a Java module's suite
// (integration/javakafka, integration/javarabbitmq, integration/rocketmqmembers,
// integration/springkafka):
// a test class Maven did not find, or a parameterized case that did not run,
// would otherwise pass as "nothing failed".
package surefire

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

var suiteAttrs = regexp.MustCompile(`<testsuite [^>]*tests="(\d+)"[^>]*skipped="(\d+)"`)

// Reports sums the tests and skipped tests of the TEST-*.xml reports in
// dir (target/surefire-reports); it fails tb when there is none.
func Reports(tb testing.TB, dir string) (ran, skipped int) {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "TEST-*.xml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no surefire report in %s (%v)", dir, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		m := suiteAttrs.FindSubmatch(b)
		if m == nil {
			tb.Fatalf("%s: no <testsuite tests= skipped=>", f)
		}
		n, _ := strconv.Atoi(string(m[1]))
		s, _ := strconv.Atoi(string(m[2]))
		ran, skipped = ran+n, skipped+s
	}
	return ran, skipped
}

var (
	testAnnotation = regexp.MustCompile(`(?m)^\s*@Test\b`)
	// A parameterized test and the annotations up to its method.
	parameterized = regexp.MustCompile(`(?m)^\s*@ParameterizedTest\b((?:\s*@[^\n]*\n)*)`)
	enumSource    = regexp.MustCompile(`@EnumSource\((\w+)\.class\)`)
	enumBody      = regexp.MustCompile(`(?s)\benum\s+(\w+)\s*\{(.*?)\}`)
	comment       = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)
	constant      = regexp.MustCompile(`^\s*([A-Z][A-Z0-9_]*)\s*$`)
)

// Declared counts the JUnit tests the .java files under dir declare: one
// per @Test, and one per constant of the enum of a @ParameterizedTest's
// @EnumSource(E.class) (E declared under dir, constants without bodies or
// arguments). A @ParameterizedTest with another source fails tb: its runs
// cannot be counted from the sources.
func Declared(tb testing.TB, dir string) int {
	tb.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".java" {
			return err
		}
		b, err := os.ReadFile(p)
		files[p] = b
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	enums := map[string]int{}
	for _, b := range files {
		for _, m := range enumBody.FindAllSubmatch(comment.ReplaceAll(b, nil), -1) {
			body := m[2]
			if i := bytes.IndexByte(body, ';'); i >= 0 {
				body = body[:i]
			}
			n := 0
			for _, c := range bytes.Split(body, []byte(",")) {
				if constant.Match(c) {
					n++
				} else if len(bytes.TrimSpace(c)) > 0 {
					n = -1
					break
				}
			}
			enums[string(m[1])] = n
		}
	}
	n := 0
	for p, b := range files {
		n += len(testAnnotation.FindAll(b, -1))
		for _, m := range parameterized.FindAllSubmatch(b, -1) {
			src := enumSource.FindSubmatch(m[1])
			if src == nil {
				tb.Fatalf("%s: a @ParameterizedTest without @EnumSource(E.class): its runs cannot be counted", p)
			}
			k, ok := enums[string(src[1])]
			if !ok || k <= 0 {
				tb.Fatalf("%s: @EnumSource(%s.class): no enum %s of plain constants under %s", p, src[1], src[1], dir)
			}
			n += k
		}
	}
	return n
}

// Tail returns the last n lines of b.
func Tail(b []byte, n int) []byte {
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}

// Install runs `mvn install` in the Maven module mod with env added to
// this process's environment, and fails tb unless it passed and every
// @Test its sources declare ran, none skipped. It returns Maven's output
// with outputFile's text after it (a test class's redirected stdout under
// target/surefire-reports; "" for none) and how many tests ran.
func Install(tb testing.TB, mod string, env []string, outputFile string) (out []byte, ran int) {
	tb.Helper()
	reports := filepath.Join(mod, "target", "surefire-reports")
	if err := os.RemoveAll(reports); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("mvn", "-B", "-Dstyle.color=never", "install")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("mvn install in %s: %v\n%s", mod, err, Tail(out, 80))
	}
	ran, skipped := Reports(tb, reports)
	want := Declared(tb, filepath.Join(mod, "src", "test", "java"))
	if ran != want || skipped != 0 {
		tb.Fatalf("%d JUnit tests ran, %d skipped; the sources declare %d\n%s", ran, skipped, want, Tail(out, 40))
	}
	if outputFile != "" {
		if b, err := os.ReadFile(filepath.Join(reports, outputFile)); err == nil {
			out = append(out, b...)
		}
	}
	return out, ran
}
