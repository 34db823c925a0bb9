package api_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/registry/api"
)

// repoRoot finds the module root above the test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// TestConfluentPythonClient runs Confluent's Python schema registry client
// (confluent-kafka from PyPI) against a real server: register, fetch and
// check a PROTOBUF schema, then serialize with ProtobufSerializer and
// auto.register.schemas a message whose file imports another.
func TestConfluentPythonClient(t *testing.T) {
	t.Parallel()
	python := filepath.Join(repoRoot(t), ".venv-registry", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the Confluent Python client is missing under CI: scripts/setup-registry-client.sh must install it: %v", err)
		}
		t.Skip("Confluent Python client not installed; run scripts/setup-registry-client.sh to create .venv-registry")
	}
	c := newServer(t, api.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "confluent_client.py"), c.url).CombinedOutput()
	if err != nil || strings.TrimSpace(lastLine(string(out))) != "ok" {
		t.Fatalf("confluent client: %v\n%s", err, out)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
