package cli

import (
	"errors"
	"fmt"

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

// load compiles files. Input that cannot be read or compiled exits 2
// (ExitUsage): compile errors are printed to stderr, one positioned error
// per line, then a line counting them.
func (p *protoFlags) load(cmd *cobra.Command, files []string) (*model.Set, error) {
	set, err := model.Load(cmd.Context(), model.Config{ImportPaths: p.importPaths}, files...)
	if err != nil {
		var ce *model.CompileError
		if errors.As(err, &ce) {
			stderr := cmd.ErrOrStderr()
			for _, e := range ce.Errors {
				fmt.Fprintln(stderr, e)
			}
			n := len(ce.Errors)
			return nil, usageErr(fmt.Errorf("%d compile error%s; nothing checked", n, plural(n)))
		}
		return nil, usageErr(err)
	}
	generate.Lint(set)
	return set, nil
}
