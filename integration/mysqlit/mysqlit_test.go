//go:build mysql

// Package mysqlit runs the Java and Python runtimes' MySQL tests (the
// dedup claim on MariaDB) for make test-mysql, as subtests named after
// each JUnit or pytest case, so the suite's count includes them. It needs
// MSGCONTRACT_MYSQL_DSN (scripts/with-mariadb.sh), Maven and the project's
// .venv with PyMySQL and aiomysql.
package mysqlit

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var root = filepath.Join("..", "..")

// TestJavaDedupStoreOnMySQL runs runtime-java's DedupStoreMySqlIT.
func TestJavaDedupStoreOnMySQL(t *testing.T) {
	needServer(t)
	dir := filepath.Join(root, "runtime-java", "core")
	reports := filepath.Join(dir, "target", "surefire-reports")
	_ = os.RemoveAll(reports)
	cmd := exec.Command("mvn", "-B", "-q", "-Dstyle.color=never", "test", "-Dtest=DedupStoreMySqlIT")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mvn test -Dtest=DedupStoreMySqlIT: %v\n%s", err, out)
	}
	src := filepath.Join(dir, "src", "test", "java", "io", "msgcontract", "support", "DedupStoreMySqlIT.java")
	report(t, filepath.Join(reports, "TEST-io.msgcontract.support.DedupStoreMySqlIT.xml"), src, `(?m)^\s*@Test\b`)
}

// TestPythonDedupOnMySQL runs runtime-python's tests_mysql with pytest (the
// dedup claim on PyMySQL, the asyncio consumer's fault tests on aiomysql).
func TestPythonDedupOnMySQL(t *testing.T) {
	needServer(t)
	dir := filepath.Join(root, "runtime-python")
	py, err := filepath.Abs(filepath.Join(root, ".venv", "bin", "python"))
	if err != nil {
		t.Fatal(err)
	}
	xmlOut := filepath.Join(t.TempDir(), "pytest.xml")
	cmd := exec.Command(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml="+xmlOut, "tests_mysql")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH=src"+string(os.PathListSeparator)+"tests")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pytest tests_mysql: %v\n%s", err, out)
	}
	report(t, xmlOut, filepath.Join(dir, "tests_mysql", "test_*.py"), `(?m)^def test_`)
}

func needServer(t *testing.T) {
	if os.Getenv("MSGCONTRACT_MYSQL_DSN") == "" {
		t.Fatal("MSGCONTRACT_MYSQL_DSN is unset: run under scripts/with-mariadb.sh (make test-mysql)")
	}
}

type testcase struct {
	Name    string    `xml:"name,attr"`
	Failure *struct{} `xml:"failure"`
	Error   *struct{} `xml:"error"`
	Skipped *struct{} `xml:"skipped"`
}

// report turns each test case of a JUnit XML report into a subtest, and
// checks that as many ran as the sources declare (src is a glob; pattern
// counts them).
func report(t *testing.T, path, src, pattern string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases  []testcase `xml:"testcase"`
		Suites []struct {
			Cases []testcase `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	cases := doc.Cases
	for _, s := range doc.Suites {
		cases = append(cases, s.Cases...)
	}
	srcs, err := filepath.Glob(src)
	if err != nil || len(srcs) == 0 {
		t.Fatalf("%s: no test sources (%v)", src, err)
	}
	want := 0
	for _, f := range srcs {
		code, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want += len(regexp.MustCompile(pattern).FindAllIndex(code, -1))
	}
	if len(cases) != want {
		t.Fatalf("%s: %d test cases ran, %s declares %d", path, len(cases), filepath.Base(src), want)
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.Name, " ", "_"), func(t *testing.T) {
			switch {
			case c.Failure != nil || c.Error != nil:
				t.Errorf("failed (see %s)", path)
			case c.Skipped != nil:
				t.Errorf("skipped")
			}
		})
	}
}
