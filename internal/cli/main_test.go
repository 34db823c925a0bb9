package cli

import (
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
