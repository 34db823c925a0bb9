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
// case in one interpreter, returning one result per case in case order.
func Run(ctx context.Context, vf *conformance.VectorFile, workDir string) ([]conformance.Result, error) {
	return run(ctx, vf, workDir, "msgcontract_conformance_executor.py")
}

// RunAsync is Run through the asyncio consumer: the cases that are consumer
// decisions (biz_key, payload_hash, classify, backoff) run messages through
// an AsyncConsumer from the generated register_<event>_handler_async.
func RunAsync(ctx context.Context, vf *conformance.VectorFile, workDir string) ([]conformance.Result, error) {
	return run(ctx, vf, workDir, "msgcontract_conformance_executor_async.py")
}

func run(ctx context.Context, vf *conformance.VectorFile, workDir, script string) ([]conformance.Result, error) {
	set, err := conformance.LoadModel(ctx, vf)
	if err != nil {
		return nil, err
	}
	b, err := pybuild.Compile(ctx, set, []string{vf.ProtoDir}, workDir, filepath.Join(filepath.Dir(workDir), ".mypy_cache"),
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
		return nil, fmt.Errorf("python executor: %v\n%s", err, stderr.String())
	}
	var results []conformance.Result
	if err := json.Unmarshal(out, &results); err != nil {
		return nil, fmt.Errorf("python executor printed no results: %v\n%s", err, out)
	}
	return results, nil
}
