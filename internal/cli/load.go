package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// ProtoFlags are the flags every command reading .proto files shares
// (package ops's registry push and check too).
type ProtoFlags struct {
	importPaths []string
}

func (p *ProtoFlags) Register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVarP(&p.importPaths, "proto_path", "I", nil,
		"directory imports are resolved against, like protoc's -I (repeatable; default: the current directory).\nmsgcontract/v1/options.proto and the well-known types need none")
}

// load compiles and lints files. Input that cannot be read or compiled exits
// 2 (ExitUsage): compile errors are printed to stderr, one positioned error
// per line, then a line counting them.
func (p *ProtoFlags) Load(cmd *cobra.Command, files []string) (*model.Set, error) {
	set, err := p.compile(cmd.Context(), files, false)
	if err != nil {
		return nil, loadFailed(cmd, err)
	}
	generate.Lint(set)
	return set, nil
}

// compile compiles files without linting them (breaking needs no lint
// diagnostics); an error is returned unprinted, for loadFailed. prebuilt:
// see model.Config.
func (p *ProtoFlags) compile(ctx context.Context, files []string, prebuilt bool) (*model.Set, error) {
	return model.Load(ctx, model.Config{ImportPaths: p.importPaths, Prebuilt: prebuilt}, files...)
}

// loadFailed prints the positioned errors of a failed compile to stderr
// and returns the error that exits 2.
func loadFailed(cmd *cobra.Command, err error) error {
	var ce *model.CompileError
	if errors.As(err, &ce) {
		stderr := cmd.ErrOrStderr()
		for _, e := range ce.Errors {
			fmt.Fprintln(stderr, e)
		}
		n := len(ce.Errors)
		return UsageErr(fmt.Errorf("%d compile error%s; nothing checked", n, Plural(n)))
	}
	return UsageErr(err)
}

// ImportPaths are the -I directories given, in order.
func (p *ProtoFlags) ImportPaths() []string { return p.importPaths }
