// Package python is the conformance executor for generated Python: it
// builds the contract modules for a vector file's protos with
// conformance/toolchain/python and runs every case in one interpreter through a
// small executor script.
package python

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/msgcontract/msgcontract/conformance"
	pybuild "github.com/msgcontract/msgcontract/conformance/toolchain/python"
)

//go:embed executor.py
var executorSource string

//go:embed executor_async.py
var asyncExecutorSource string

// Run generates and checks Python for vf's protos in workDir and runs every
// case in one interpreter, returning one result per case in case order, on
// the newest end of the supported protobuf range: Executor{}.Run.
func Run(ctx context.Context, vf *conformance.VectorFile, workDir string) ([]conformance.Result, error) {
	return Executor{}.Run(ctx, vf, workDir)
}

// RunAsync is Run through the asyncio consumer: the cases that are consumer
// decisions (biz_key, payload_hash, classify, backoff) run messages through
// an AsyncConsumer from the generated register_<event>_handler_async.
// Executor{Async: true}.Run.
func RunAsync(ctx context.Context, vf *conformance.VectorFile, workDir string) ([]conformance.Result, error) {
	return Executor{Async: true}.Run(ctx, vf, workDir)
}

// Executor runs the vectors on one end of the supported protobuf range:
// the generated _pb2 modules come from that end's protoc, mypy checks them
// against its types-protobuf, and they run on its protobuf runtime with the
// msgcontract-runtime installed there (conformance/toolchain/python's End).
// The zero value is Run's: the newest end, the synchronous consumer.
type Executor struct {
	End pybuild.End
	// Async runs the consumer decisions through the asyncio consumer, as
	// RunAsync.
	Async bool
}

// Run is the executor's conformance.Executor Run.
func (e Executor) Run(ctx context.Context, vf *conformance.VectorFile, workDir string) ([]conformance.Result, error) {
	script := "msgcontract_conformance_executor.py"
	if e.Async {
		script = "msgcontract_conformance_executor_async.py"
	}
	return run(ctx, e.End, vf, workDir, script)
}

func run(ctx context.Context, end pybuild.End, vf *conformance.VectorFile, workDir, script string) ([]conformance.Result, error) {
	set, err := conformance.LoadModel(ctx, vf)
	if err != nil {
		return nil, err
	}
	// One mypy cache per end: their stubs differ.
	cache := ".mypy_cache"
	if end != pybuild.Newest {
		cache += "-" + end.String()
	}
	b, err := pybuild.CompileAt(ctx, end, set, []string{vf.ProtoDir}, workDir, filepath.Join(filepath.Dir(workDir), cache),
		map[string]string{
			"msgcontract_conformance_executor.py":       executorSource,
			"msgcontract_conformance_executor_async.py": asyncExecutorSource,
		})
	if err != nil {
		return nil, err
	}
	in, err := json.Marshal(vf.Cases)
	if err != nil {
		return nil, err
	}
	cmd := b.Command(ctx, append([]string{filepath.Join(b.Root, script)}, b.Modules...)...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("python executor (%s protobuf end): %v\n%s", end, err, stderr.String())
	}
	var results []conformance.Result
	if err := json.Unmarshal(out, &results); err != nil {
		return nil, fmt.Errorf("python executor printed no results: %v\n%s", err, out)
	}
	return results, nil
}
