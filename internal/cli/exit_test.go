package cli

import (
	"strings"
	"testing"
)

// TestExitCodesAndStreams holds every command to docs/cli.md's promise:
// exit 0 clean, 1 findings, 2 input that cannot be read or compiled (or a
// usage error); findings on stdout, errors on stderr, each message
// prefixed once with the command that failed. (registry, dlq and dedup:
// package ops's TestOpsExitCodesAndStreams.)
func TestExitCodesAndStreams(t *testing.T) {
	t.Chdir("../..")
	const payment = "examples/proto/shop/payment/v1/payment.proto"
	tests := []struct {
		name string
		args []string
		code int
		// stdout and stderr must contain these; an empty want means the
		// stream must be empty.
		stdout, stderr string
	}{
		{"lint clean", []string{"lint", "-I", "examples/proto", payment}, ExitOK, "", "ok: 1 file, 3 events, 1 state machine, 0 problems\n"},
		{"lint clean, quiet", []string{"lint", "-q", "-I", "examples/proto", payment}, ExitOK, "", ""},
		{"lint findings", []string{"lint", "-I", "testdata/lint", "testdata/lint/many_errors.proto"}, ExitFindings,
			"RETRY_MAX_RETRIES", "msgcontract lint: 6 problems\n"},
		{"lint syntax error", []string{"lint", "-I", "testdata/lint", "testdata/lint/compile_syntax_error.proto"}, ExitUsage,
			"", "syntax error: expecting ';'\nmsgcontract lint: 1 compile error; nothing checked\n"},
		{"lint missing import", []string{"lint", "-I", "testdata/lint", "testdata/lint/compile_missing_import.proto"}, ExitUsage,
			"", "add -I with the directory"},
		{"lint missing file", []string{"lint", "no/such.proto"}, ExitUsage, "", "msgcontract lint: no/such.proto"},
		{"lint no file", []string{"lint"}, ExitUsage, "", "msgcontract lint: requires at least 1 arg(s)"},
		{"unknown flag", []string{"lint", "--bogus", payment}, ExitUsage, "", "msgcontract lint: unknown flag: --bogus\n"},
		{"unknown command", []string{"lnt"}, ExitUsage, "", "msgcontract: unknown command \"lnt\""},
		{"bizkey on a syntax error", []string{"bizkey", "-I", "testdata/lint", "--message", "x.Ev", "--json", "{}",
			"testdata/lint/compile_syntax_error.proto"}, ExitUsage, "", "msgcontract bizkey: 1 compile error"},
		{"bizkey without flags", []string{"bizkey", payment}, ExitUsage, "", "msgcontract bizkey: --message and --json are required"},
		{"generate on lint errors", []string{"generate", "--lang", "go", "--out", t.TempDir(), "-I", "testdata/lint",
			"testdata/lint/many_errors.proto"}, ExitFindings, "", "msgcontract generate: 6 lint problems; nothing written\n"},
		{"generate on a syntax error", []string{"generate", "--lang", "go", "--out", t.TempDir(), "-I", "testdata/lint",
			"testdata/lint/compile_syntax_error.proto"}, ExitUsage, "", "msgcontract generate: 1 compile error"},
		{"generate clean", []string{"generate", "--lang", "go+java", "--out", t.TempDir(), "-I", "examples/proto", payment}, ExitOK,
			"go/github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1/payment.msgcontract.go\njava/com/example/shop/payment/v1/PaymentContract.java\n",
			"ok: generated 2 files for go, java (1 contract)\n"},
		{"generate clean, quiet", []string{"generate", "-q", "--lang", "go", "--out", t.TempDir(), "-I", "examples/proto", payment}, ExitOK, "", ""},
		{"breaking without --against", []string{"breaking", payment}, ExitUsage, "", "msgcontract breaking: --against PREV is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			for _, s := range []struct{ name, got, want string }{{"stdout", stdout, tt.stdout}, {"stderr", stderr, tt.stderr}} {
				if s.want == "" && s.got != "" {
					t.Errorf("%s should be empty, got:\n%s", s.name, s.got)
				}
				if !strings.Contains(s.got, s.want) {
					t.Errorf("%s lacks %q:\n%s", s.name, s.want, s.got)
				}
			}
			if strings.Contains(stderr, "msgcontract: msgcontract") {
				t.Errorf("doubled prefix:\n%s", stderr)
			}
		})
	}
}
