// Command genexamples writes the Go code of the example contracts under
// examples/gen/go (protoc-gen-go's and msgcontract's), with no protoc. Run
// it from the repository root through `make examples-gen`.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/msgcontract/msgcontract/internal/examplegen"
)

func main() {
	files, err := examplegen.Files(context.Background(), ".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "genexamples:", err)
		os.Exit(1)
	}
	for _, f := range files {
		name := filepath.Join(examplegen.OutDir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "genexamples:", err)
			os.Exit(1)
		}
		if err := os.WriteFile(name, f.Content, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "genexamples:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", filepath.ToSlash(name))
	}
}
