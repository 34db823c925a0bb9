package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommand: run by hand, the plugin answers --help and --version on
// stdout with exit 0, and anything else with a pointer to --help on
// stderr and exit 2 (protoc passes no arguments).
func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		arg            string
		code           int
		stdout, stderr string
	}{
		{"--help", 0, "lang=go|java|python", ""},
		{"-h", 0, "opt: [lang=go+java+python, paths=source_relative]", ""},
		{"--version", 0, "protoc-gen-msgcontract ", ""},
		{"generate", 2, "", `unknown argument "generate"`},
	} {
		var stdout, stderr bytes.Buffer
		code := command([]string{tc.arg}, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) ||
			(tc.stdout == "") != (stdout.Len() == 0) || (tc.stderr == "") != (stderr.Len() == 0) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d, stdout with %q, stderr with %q",
				tc.arg, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}
