// Command genproto regenerates the committed Go code of msgcontract's own
// protos (contracts/msgcontract/v1) into runtime-go/optionspb and
// runtime-go/envelopepb without a protoc binary: protocompile
// compiles them and protoc-gen-go runs as a library. Run it from the
// repository root through `make proto`.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/msgcontract/msgcontract/third_party/protocompile"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/golang/pbgo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genproto:", err)
		os.Exit(1)
	}
}

func run() error {
	comp := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			ImportPaths: []string{"contracts"},
		}),
		SourceInfoMode: protocompile.SourceInfoStandard,
	}
	targets := []struct{ file, module, dir string }{
		{"msgcontract/v1/options.proto", "github.com/msgcontract/msgcontract/runtime-go", "runtime-go"},
		{"msgcontract/v1/envelope.proto", "github.com/msgcontract/msgcontract/runtime-go", "runtime-go"},
	}
	for _, t := range targets {
		files, err := comp.Compile(context.Background(), t.file)
		if err != nil {
			return err
		}
		out, err := pbgo.Generate(emit.Params{Module: t.module}, files[0])
		if err != nil {
			return err
		}
		for _, f := range out {
			if err := emit.WriteFile(filepath.FromSlash(t.dir), f); err != nil {
				return err
			}
			fmt.Println("wrote", filepath.Join(t.dir, f.Name))
		}
	}
	return nil
}
