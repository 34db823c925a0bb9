package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedIsCurrent fails while runtime-go's copy of contracts/sql
// differs from the files: run `make sql` and commit the result.
func TestGeneratedIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	want, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(Output)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run `make sql` and commit it", Output)
	}
}

// TestGenerateCopiesEveryFile: each dialect's file is in the output
// verbatim, and a missing file is an error, not an empty dialect.
func TestGenerateCopiesEveryFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "contracts", "sql")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range Dialects {
		if err := os.WriteFile(filepath.Join(dir, d+".sql"), []byte("-- table: t_"+d+"\nCREATE TABLE t_"+d+" (a TEXT);\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := Generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range Dialects {
		if !bytes.Contains(out, []byte("-- table: t_"+d+"\nCREATE TABLE t_"+d+" (a TEXT);\n")) {
			t.Errorf("the output lacks %s.sql:\n%s", d, out)
		}
	}
	if err := os.Remove(filepath.Join(dir, "mysql.sql")); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(root); err == nil {
		t.Error("a missing file was accepted")
	}
}
