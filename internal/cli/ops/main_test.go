package ops

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/msgcontract/msgcontract/registry/schema"
)

// TestMain lets registry serve, run by the tests, re-execute the test
// binary as its compilation workers.
func TestMain(m *testing.M) {
	schema.RunWorkerIfAsked()
	os.Exit(m.Run())
}

// run executes msgcontract-ops's CLI and returns its exit code, stdout and
// stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Execute(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}
