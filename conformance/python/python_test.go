package python_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/conformance"
	"github.com/msgcontract/msgcontract/conformance/python"
	pybuild "github.com/msgcontract/msgcontract/conformance/toolchain/python"
)

// TestPythonExecutorEnds runs one vector file (keys.json: biz_key rendering,
// whose generated code hands the runtime protobuf descriptors) through the
// executor on each end of the protobuf range, synchronous and asyncio; the
// conformance command runs every file.
func TestPythonExecutorEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and type-checks generated Python on both protobuf ends")
	}
	vf, err := conformance.LoadFile(filepath.Join("..", "..", "testdata", "conformance", "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exs []conformance.Executor
	for _, end := range []pybuild.End{pybuild.Newest, pybuild.Oldest} {
		for _, async := range []bool{false, true} {
			lang := "python-" + end.String()
			if async {
				lang += "-async"
			}
			exs = append(exs, conformance.Executor{Lang: lang, Run: python.Executor{End: end, Async: async}.Run})
		}
	}
	var out bytes.Buffer
	for _, s := range conformance.Run(context.Background(), &out, []*conformance.VectorFile{vf}, exs, t.TempDir()) {
		if s.Failed > 0 || s.Passed != len(vf.Cases) {
			t.Errorf("%s; want %d passed, 0 failed", s.Line(), len(vf.Cases))
		}
	}
	if t.Failed() {
		t.Log(out.String())
	}
}
