package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// run executes the CLI from the repository root and returns its exit code,
// stdout and stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Execute(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestLintGolden runs lint on every contract in testdata/lint and compares
// exit code and output with its .golden file. Each bad contract must also
// yield the rule its name announces, so a regenerated golden cannot
// silently lose the error it exists for.
func TestLintGolden(t *testing.T) {
	t.Chdir("../..")
	files, err := filepath.Glob("testdata/lint/*.proto")
	if err != nil || len(files) < 15 {
		t.Fatalf("want at least 15 lint cases, found %d (%v)", len(files), err)
	}
	wantRule := map[string]string{
		"java_field_descriptor": "JAVA_FIELD_NAME",
		"python_keyword_value":  "PYTHON_KEYWORD_NAME",
		"2fa_outer_class":       "JAVA_OUTER_CLASS",
		"java_class_clash":      "JAVA_CLASS_COLLISION",
		"go_type_clash":         "GO_NAME_COLLISION",
		"hint_real_fields":      "BIZKEY_MISSING", "go_name_collision": "GO_NAME_COLLISION",
		"placeholder_float": "BIZKEY_FIELD_TYPE", "placeholder_double": "BIZKEY_FIELD_TYPE",
		"placeholder_bytes": "BIZKEY_FIELD_TYPE", "placeholder_repeated": "BIZKEY_FIELD_TYPE",
		"placeholder_map": "BIZKEY_FIELD_TYPE", "placeholder_message": "BIZKEY_FIELD_TYPE",
		"placeholder_through_scalar": "BIZKEY_FIELD_TYPE", "placeholder_through_repeated": "BIZKEY_FIELD_TYPE",
		"placeholder_unknown_field": "BIZKEY_UNKNOWN_FIELD",
		"brace_unclosed":            "BIZKEY_SYNTAX", "brace_unmatched_close": "BIZKEY_SYNTAX", "brace_empty": "BIZKEY_SYNTAX",
		"key_constant": "BIZKEY_CONSTANT", "key_missing": "BIZKEY_MISSING",
		"ranges_overlap": "RANGE_OVERLAP", "range_from_gt_to": "RANGE_ORDER",
		"retry_bad_duration": "RETRY_DURATION", "retry_fraction_ms": "RETRY_DURATION",
		"retry_max_retries": "RETRY_MAX_RETRIES", "retry_multiplier": "RETRY_MULTIPLIER",
		"retry_max_below_base": "RETRY_MAX_DELAY",
		"transition_unknown":   `TRANSITION_UNKNOWN: transition from "PAYED": State has no such value; did you mean "PAID"?`, "transition_zero": "TRANSITION_ZERO",
		"transition_not_machine":   "TRANSITION_NOT_STATE_MACHINE",
		"target_state_not_machine": "TARGET_STATE_NOT_MACHINE", "target_state_unknown_value": `TARGET_STATE_UNKNOWN: target_state "State.PAYD": State has no value "PAYD"; did you mean "PAID"?`,
		"compile_syntax_error": "syntax error", "compile_missing_import": "add -I",
		"many_errors":               "RETRY_MAX_RETRIES",
		"compile_option_field_typo": `unknown field "biz_kye"; did you mean "biz_key" (msgcontract.v1.Event.biz_key)?`,
		"compile_extension_typo":    `unknown extension msgcontract.v1.evnet; did you mean (msgcontract.v1.event)?`,
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".proto")
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := run(t, "lint", "-I", "testdata/lint", file)
			got := fmt.Sprintf("exit: %d\n--- stdout\n%s--- stderr\n%s", code, stdout, stderr)
			golden := strings.TrimSuffix(file, ".proto") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/cli -run TestLintGolden -update)", err)
			}
			if got != string(want) {
				t.Errorf("lint %s differs from %s (refresh with -update if intended)\ngot:\n%s\nwant:\n%s", file, golden, got, want)
			}
			wantCode := ExitFindings
			if strings.HasPrefix(name, "compile_") {
				wantCode = ExitUsage // input that does not compile is not a finding
			}
			if code != wantCode {
				t.Errorf("exit code %d, want %d", code, wantCode)
			}
			rule, ok := wantRule[name]
			if !ok {
				t.Fatalf("no expected rule declared for %s", name)
			}
			if !strings.Contains(stdout+stderr, rule) {
				t.Errorf("output lacks %q", rule)
			}
			for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
				if line != "" && !strings.HasPrefix(line, file+":") {
					t.Errorf("diagnostic %q does not start with %s:LINE:COL", line, file)
				}
			}
			if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
				t.Errorf("stack trace in output:\n%s", stderr)
			}
		})
	}
}

func TestLintExamplesExplain(t *testing.T) {
	t.Chdir("../..")
	code, stdout, stderr := run(t, "lint", "--explain", "-I", "examples/proto",
		"examples/proto/shop/payment/v1/payment.proto", "examples/proto/shop/inventory/v1/inventory.proto")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{
		"event shop.payment.v1.PaySuccess",
		"biz_key:      order_id:{order_id}:PAY_SUCCESS",
		"worst case before dead-letter: 63s without jitter, up to 69s with jitter (7 attempts)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("explain output lacks %q:\n%s", want, stdout)
		}
	}
	// The schedule 1,2,4,8,16,32 s with cumulative 63 s.
	var delays []string
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) == 5 && f[0] >= "1" && f[0] <= "6" && len(f[0]) == 1 && len(delays) < 6 {
			delays = append(delays, f[1])
		}
	}
	if got := strings.Join(delays, ","); got != "1s,2s,4s,8s,16s,32s" {
		t.Errorf("PaySuccess delays = %s, want 1s,2s,4s,8s,16s,32s", got)
	}
}

func TestBizkeyCommand(t *testing.T) {
	t.Chdir("../..")
	proto := "examples/proto/shop/payment/v1/payment.proto"
	tests := []struct {
		name     string
		json     string
		code     int
		stdout   string
		inStderr string
	}{
		{"plain", `{"order_id":"20250101_0001","amount":10000}`, ExitOK, "order_id:20250101_0001:PAY_SUCCESS\n", ""},
		{"escaped", `{"order_id":"a:b c/%ü"}`, ExitOK, "order_id:a%3Ab%20c%2F%25%C3%BC:PAY_SUCCESS\n", ""},
		{"empty", `{"amount":1}`, ExitFindings, "", "EMPTY_FIELD"},
		{"too long", `{"order_id":"` + strings.Repeat("x", 500) + `"}`, ExitFindings, "", "KEY_TOO_LONG"},
		{"bad json", `{"order_id":`, ExitUsage, "", "not valid proto JSON"},
		{"camelCase accepted as proto JSON", `{"orderId":"x"}`, ExitOK, "order_id:x:PAY_SUCCESS\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "bizkey", "-I", "examples/proto", "--message", "shop.payment.v1.PaySuccess", "--json", tc.json, proto)
			if code != tc.code || stdout != tc.stdout || !strings.Contains(stderr, tc.inStderr) {
				t.Errorf("got exit %d stdout %q stderr %q; want exit %d stdout %q stderr containing %q",
					code, stdout, stderr, tc.code, tc.stdout, tc.inStderr)
			}
		})
	}
	code, _, stderr := run(t, "bizkey", "-I", "examples/proto", "--message", "shop.payment.v1.Nope", "--json", "{}", proto)
	if code != ExitUsage || !strings.Contains(stderr, "no event") {
		t.Errorf("unknown message: exit %d stderr %q", code, stderr)
	}
}
