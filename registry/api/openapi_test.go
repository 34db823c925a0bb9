package api_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/registry/api"
)

// TestOpenAPISchemathesis checks /openapi.json against the live server
// with schemathesis (PyPI, installed into .venv-registry by
// scripts/setup-registry-client.sh): generated requests for every
// operation must get no 5xx, and every answer must match the document in
// status, content type and body schema. Under CI a missing schemathesis
// fails the test.
func TestOpenAPISchemathesis(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make check): schemathesis takes half a minute; make test runs it")
	}
	t.Parallel()
	bin := filepath.Join(repoRoot(t), ".venv-registry", "bin", "schemathesis")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("schemathesis missing under CI: scripts/setup-registry-client.sh must install it: %v", err)
		}
		t.Skip("schemathesis not installed; run scripts/setup-registry-client.sh")
	}
	c := newServer(t, api.Config{})
	var doc map[string]any
	if err := json.Unmarshal(c.expect("GET", "/openapi.json", nil, 200, 0).body, &doc); err != nil {
		t.Fatalf("/openapi.json is not JSON: %v", err)
	}
	// Something to find: generated requests then reach found paths too.
	c.expect("POST", "/subjects/s/versions", reg(v1), 200, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", c.url+"/openapi.json",
		"--url", c.url,
		"--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
		"--max-examples", "20",
		"--workers", "2",
		"--seed", "1",
		"--no-color",
	)
	cmd.Env = append(os.Environ(), "SCHEMATHESIS_HOOKS=", "HYPOTHESIS_STORAGE_DIRECTORY="+t.TempDir())
	cmd.Dir = t.TempDir() // schemathesis writes a .schemathesis cache where it runs
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("schemathesis found problems (%v):\n%s", err, out)
	}
	t.Logf("%s", lastLines(string(out), 6))
}

func lastLines(s string, n int) string {
	lines := splitLines(s)
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
