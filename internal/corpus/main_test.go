//go:build corpus

package corpus_test

import (
	"os"
	"testing"

	"github.com/msgcontract/msgcontract/conformance/toolchain/java"
)

// javaTools is the Java toolchain every corpus test shares: resolving it
// takes a Maven run, so it is resolved once per test process, and TestMain
// removes it once every test is done (no single test may).
var javaTools = &java.Shared{}

func TestMain(m *testing.M) {
	code := m.Run()
	javaTools.Close()
	os.Exit(code)
}
