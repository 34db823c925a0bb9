package java_test

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/conformance/toolchain/java"
	"github.com/msgcontract/msgcontract/internal/testsummary"
)

//go:embed testdata/ConsumerTest.java
var consumerTest []byte

// TestMavenJUnit builds the example contracts' generated Java with Maven
// (-Xlint:all -Werror) and runs JUnit 5 tests of the contract classes and
// the consumer skeleton against SQLite, at both ends of PROTOBUF's Java
// range.
func TestMavenJUnit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with Maven; skipped with -short")
	}
	ran := map[java.End]int{}
	for _, end := range []java.End{java.Newest, java.Oldest} {
		t.Run(end.String(), func(t *testing.T) { ran[end] = mavenJUnit(t, end) })
	}
	if !t.Failed() {
		testsummary.Report(t, "java", fmt.Sprintf("%d tests on protobuf-java %s, %d on %s",
			ran[java.Newest], java.Newest.Version(), ran[java.Oldest], java.Oldest.Version()))
	}
}

// mavenJUnit runs TestMavenJUnit at end and returns how many tests ran.
func mavenJUnit(t *testing.T, end java.End) int {
	ctx := context.Background()
	tools, err := java.ResolveEnd(ctx, end)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tools.Close() })
	root := filepath.Join("..", "..", "..", "examples", "proto")
	set, err := model.Load(ctx, model.Config{ImportPaths: []string{root}},
		filepath.Join(root, "shop", "payment", "v1", "payment.proto"),
		filepath.Join(root, "shop", "inventory", "v1", "inventory.proto"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	pbSrc, genSrc, _, err := tools.Sources(ctx, set, []string{root}, work)
	if err != nil {
		t.Fatal(err)
	}
	// Maven compiles one source tree: the generated classes join protoc's.
	if err := os.CopyFS(pbSrc, os.DirFS(genSrc)); err != nil {
		t.Fatal(err)
	}
	testSrc := filepath.Join(work, "test-java", "com", "example", "shop", "payment", "v1")
	if err := os.MkdirAll(testSrc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(testSrc, "ConsumerTest.java"), consumerTest, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-B", "-f", filepath.Join(tools.Dir, "pom.xml")}, tools.MavenProperties()...)
	cmd := exec.CommandContext(ctx, "mvn", append(args,
		"-Dgen.main="+pbSrc, "-Dgen.test="+filepath.Join(work, "test-java"),
		"test")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mvn test: %v\n%s", err, out)
	}
	// Surefire counts what ran: a test Maven did not find (a renamed
	// class, a wrong -Dgen.test) would otherwise pass as "nothing failed".
	ran, err := surefireCount(ansi.ReplaceAll(out, nil))
	if err != nil {
		t.Fatalf("%v\n%s", err, lastLines(out, 20))
	}
	if want := bytes.Count(consumerTest, []byte("@Test\n")); ran != want {
		t.Fatalf("surefire ran %d JUnit tests, want the %d of ConsumerTest.java\n%s", ran, want, lastLines(out, 20))
	}
	return ran
}

// surefireTotal is surefire's closing line after "Results:".
var surefireTotal = regexp.MustCompile(`(?m)^\[INFO\] Tests run: (\d+), Failures: 0, Errors: 0, Skipped: 0$`)

// surefireCount returns how many JUnit tests ran, none failed or skipped.
func surefireCount(out []byte) (int, error) {
	m := surefireTotal.FindAllSubmatch(out, -1)
	if len(m) == 0 {
		return 0, fmt.Errorf("mvn test: no surefire total \"Tests run: N, Failures: 0, Errors: 0, Skipped: 0\" in its output")
	}
	return strconv.Atoi(string(m[len(m)-1][1]))
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func lastLines(b []byte, n int) []byte {
	for i := len(b) - 2; i >= 0; i-- {
		if b[i] == '\n' {
			n--
			if n == 0 {
				return b[i+1:]
			}
		}
	}
	return b
}
