package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract"
)

// TestInit: the command writes the scaffold named after DIR, with the
// runtime of the VERSION a dev build was built from (and says so), refuses
// a non-empty DIR unless --force and an unusable name, each exiting 2.
func TestInit(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "billing")
	code, stdout, stderr := run(t, "init", "--lang", "go", dir)
	if code != ExitOK {
		t.Fatalf("init: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, `wrote a go service "billing"`) {
		t.Errorf("stdout: %q", stdout)
	}
	if !strings.Contains(stderr, "a development build; the scaffold requires the runtimes of "+msgcontract.Version) {
		t.Errorf("a dev build does not say which runtime version it chose: %q", stderr)
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gomod), "runtime-go v"+msgcontract.Version+"\n") {
		t.Errorf("go.mod does not require runtime-go v%s:\n%s", msgcontract.Version, gomod)
	}
	if _, err := os.Stat(filepath.Join(dir, "proto/billing/v1/billing.proto")); err != nil {
		t.Errorf("no contract named after DIR: %v", err)
	}

	// Not into a non-empty DIR ...
	code, _, stderr = run(t, "init", "--lang", "python", "--name", "billing", dir)
	if code != ExitUsage || !strings.Contains(stderr, "msgcontract init: "+dir+": directory is not empty") || !strings.Contains(stderr, "--force") {
		t.Errorf("init into a non-empty dir: exit %d, stderr %q; want 2 naming the dir and --force", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "pyproject.toml")); err == nil {
		t.Errorf("a refused init wrote pyproject.toml")
	}
	// ... unless --force, which leaves the user's own files.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "init", "--lang", "python", "--force", dir); code != ExitOK {
		t.Fatalf("init --force: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("--force touched a file not its own: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pyproject.toml")); err != nil {
		t.Errorf("init --force did not write pyproject.toml: %v", err)
	}

	for _, tt := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no --lang", []string{"init", filepath.Join(base, "x")}, "--lang is required"},
		{"unknown lang", []string{"init", "--lang", "rust", filepath.Join(base, "x")}, `unknown language "rust"`},
		{"DIR's name unusable", []string{"init", "--lang", "go", filepath.Join(base, "my-service")}, "the name taken from DIR: name \"my-service\" is not a lower-case identifier"},
		{"--name unusable", []string{"init", "--lang", "go", "--name", "class", filepath.Join(base, "x")}, "--name class_service"},
		{"no DIR", []string{"init", "--lang", "go"}, "accepts 1 arg(s)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			if code != ExitUsage || stdout != "" || !strings.Contains(stderr, tt.stderr) || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "msgcontract init: ") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, tt.stderr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(base, "my-service")); err == nil {
		t.Errorf("a refused name still created its directory")
	}
}
