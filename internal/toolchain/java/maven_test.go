package java_test

import (
	"bytes"
	"context"
	_ "embed"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/internal/toolchain/java"
)

//go:embed testdata/ConsumerTest.java
var consumerTest []byte

// TestMavenJUnit builds the example contracts' generated Java with Maven
// (-Xlint:all -Werror) and runs JUnit 5 tests of the contract classes and
// the consumer skeleton against SQLite.
func TestMavenJUnit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds with Maven; skipped with -short")
	}
	ctx := context.Background()
	tools, err := java.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("..", "..", "..", "examples", "proto")
	set, err := model.Load(ctx, model.Config{ImportPaths: []string{root}},
		filepath.Join(root, "shop", "payment", "v1", "payment.proto"),
		filepath.Join(root, "shop", "inventory", "v1", "inventory.proto"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	pbSrc, genSrc, _, err := java.Sources(ctx, tools, set, []string{root}, work)
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
	cmd := exec.CommandContext(ctx, "mvn", "-B", "-f", filepath.Join(tools.Dir, "pom.xml"),
		"-Dgen.main="+pbSrc, "-Dgen.test="+filepath.Join(work, "test-java"),
		"test")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mvn test: %v\n%s", err, out)
	}
	// Every @Test must have run: a test Maven silently skipped or never
	// found fails here.
	want := bytes.Count(consumerTest, []byte("@Test"))
	m := regexp.MustCompile(`(?m)Tests run: (\d+), Failures: 0, Errors: 0, Skipped: (\d+)\s*$`).FindAllSubmatch(ansi.ReplaceAll(out, nil), -1)
	if len(m) == 0 || string(m[len(m)-1][1]) != strconv.Itoa(want) || string(m[len(m)-1][2]) != "0" {
		t.Fatalf("mvn test: want %d tests run and none skipped:\n%s", want, lastLines(out, 12))
	}
	t.Logf("%s", lastLines(out, 8))
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
