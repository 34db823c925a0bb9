//go:build corpus

package corpus_test

import (
	"os"
	"testing"

	"github.com/msgcontract/msgcontract/internal/toolchain/java"
)

// TestMain removes the Java toolchain's temporary directory once every
// test is done: the toolchain is resolved once per process and shared by
// the tests, so no single test may remove it.
func TestMain(m *testing.M) {
	code := m.Run()
	java.Cleanup()
	os.Exit(code)
}
