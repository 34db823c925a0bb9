package schema_test

import (
	"os"
	"testing"

	"github.com/msgcontract/msgcontract/registry/schema"
)

func TestMain(m *testing.M) {
	schema.RunWorkerIfAsked()
	os.Exit(m.Run())
}
