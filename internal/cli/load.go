package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// protoFlags are the flags every command reading .proto files shares.
type protoFlags struct {
	importPaths []string
}

func (p *protoFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&p.importPaths, "proto_path", "I", nil,
		"directory imports are resolved against, like protoc's -I (repeatable; default: the current directory).\nmsgcontract/v1/options.proto and the well-known types need none")
}

// load compiles files. Compile errors are printed to stderr one per line
// and returned as an exitError with code.
func (p *protoFlags) load(cmd *cobra.Command, files []string, stderr io.Writer, code int) (*model.Set, error) {
	set, err := model.Load(cmd.Context(), model.Config{ImportPaths: p.importPaths}, files...)
	if err != nil {
		var ce *model.CompileError
		if errors.As(err, &ce) {
			for _, e := range ce.Errors {
				fmt.Fprintln(stderr, e)
			}
			return nil, &exitError{code: code, silent: true}
		}
		return nil, &exitError{code: ExitUsage, err: err}
	}
	generate.Lint(set)
	return set, nil
}
