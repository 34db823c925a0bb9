package surefire

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDeclaredCountsTestsAndEnumCases(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "Db.java", "package x;\n/** the databases, one, two */\nenum Db {\n  POSTGRES,\n  MARIADB\n}\n")
	write(t, dir, "ATest.java", `package x;
class ATest {
  @Test
  void one() {}

  @ParameterizedTest
  @EnumSource(Db.class)
  void two(Db d) {}

  @ParameterizedTest
  @EnumSource(Db.class)
  @Timeout(5)
  void three(Db d) {}
}
`)
	if got := Declared(t, dir); got != 5 {
		t.Fatalf("Declared = %d, want 1 + 2 + 2", got)
	}
}

func TestReportsSumsTheSuites(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "TEST-a.xml", `<?xml version="1.0"?><testsuite name="a" tests="3" errors="0" skipped="1" failures="0">`)
	write(t, dir, "TEST-b.xml", `<?xml version="1.0"?><testsuite name="b" tests="4" errors="0" skipped="0" failures="0">`)
	ran, skipped := Reports(t, dir)
	if ran != 7 || skipped != 1 {
		t.Fatalf("Reports = %d, %d; want 7, 1", ran, skipped)
	}
}
