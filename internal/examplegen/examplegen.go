// Package examplegen produces the committed Go code of the example
// contracts: protoc-gen-go's messages and msgcontract's stubs, both without
// protoc. `make examples-gen` writes it; a test fails when it is stale.
package examplegen

import (
	"context"
	"path/filepath"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// Module is the Go module the example code belongs to.
const Module = "github.com/msgcontract/msgcontract"

// Protos are the example contracts, relative to ProtoDir.
var Protos = []string{"shop/payment/v1/payment.proto", "shop/inventory/v1/inventory.proto"}

// ProtoDir is the examples' import path, relative to the repository root.
const ProtoDir = "examples/proto"

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

// Files returns every generated file, named relative to the repository
// root, for the repository at root.
func Files(ctx context.Context, root string) ([]emit.File, error) {
	set, err := Load(ctx, root)
	if err != nil {
		return nil, err
	}
	return generate.Run(set, emit.Params{Lang: "go", Module: Module, WithPB: true})
}
