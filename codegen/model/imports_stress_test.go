//go:build stress

package model_test

import "testing"

// TestLoadManyImports1000 is issue #43's acceptance check in process: a
// file with 64 imports loads 1,000 times without a crash. The unguarded
// loader crashed in about a third of 20-load runs of a plain build; under
// -race, TestLoadManyImports reports any unguarded access in 20 loads, so
// this one is built only with -tags stress, without -race (`make test-go`
// runs it so: about 11 s; with -race it takes about 80 s).
func TestLoadManyImports1000(t *testing.T) {
	loadManyImports(t, 1000, false)
}
