// Package examplegen produces the committed Go code of the example
// contracts: protoc-gen-go's messages and msgcontract's stubs, both without
// protoc. `make examples-gen` writes it; codegen/golang's golden test fails
// when it is stale (examples/gen/go is the examples' golden tree).
package examplegen

import (
	"context"
	"path/filepath"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// Protos are the example contracts, relative to ProtoDir.
var Protos = []string{"shop/payment/v1/payment.proto", "shop/inventory/v1/inventory.proto"}

// ProtoDir is the examples' import path, relative to the repository root.
const ProtoDir = "examples/proto"

// OutDir is where the generated code is committed, relative to the
// repository root: the go_package paths of the examples, under the module
// github.com/msgcontract/msgcontract, are examples/gen/go/<proto's dir>.
const OutDir = "examples/gen/go"

// Params generate the committed code: protoc-gen-go's files too, named by
// the .proto's path (relative to OutDir).
var Params = emit.Params{Lang: "go", Paths: "source_relative", WithPB: true}

// Load compiles the example contracts of the repository at root (not
// linted).
func Load(ctx context.Context, root string) (*model.Set, error) {
	protoDir := filepath.Join(root, ProtoDir)
	paths := make([]string, len(Protos))
	for i, p := range Protos {
		paths[i] = filepath.Join(protoDir, filepath.FromSlash(p))
	}
	return model.Load(ctx, model.Config{ImportPaths: []string{protoDir}}, paths...)
}

// Files returns every generated file, named relative to OutDir, for the
// repository at root.
func Files(ctx context.Context, root string) ([]emit.File, error) {
	set, err := Load(ctx, root)
	if err != nil {
		return nil, err
	}
	return generate.Run(set, Params)
}
