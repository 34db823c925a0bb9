// Package cli implements the msgcontract command line. Each subcommand
// lives in a file of its own; cmd/msgcontract only calls Execute.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/internal/buildinfo"
)

// Exit codes scripts can rely on.
const (
	// ExitOK: success, nothing found.
	ExitOK = 0
	// ExitFindings: the command ran and found problems (lint errors,
	// breaking changes, a key that could not be rendered).
	ExitFindings = 1
	// ExitUsage: bad flags or arguments, or inputs that cannot be read or
	// compiled.
	ExitUsage = 2
)

// exitError carries an exit code out of a command. Its message, if any,
// has already been printed when silent is set.
type exitError struct {
	code   int
	err    error
	silent bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// findings returns an error that exits 1 without printing more.
func findings() error { return &exitError{code: ExitFindings, silent: true} }

// usageErr returns an error that prints err and exits 2.
func usageErr(err error) error { return &exitError{code: ExitUsage, err: err} }

// Execute runs the whole CLI with args (without the program name) and
// returns the process exit code: msgcontract-ops, and the tests.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return execute(ctx, newRoot(stdout, stderr, contractCommands, opsCommands), args, stderr)
}

// ExecuteContract is Execute for the msgcontract binary: the contract
// commands run in it, and registry, dlq and dedup (the commands that talk
// to brokers, databases and registries) are handed to msgcontract-ops,
// so that the binary every build runs does not carry (and map into
// memory) their clients; see ops.go.
func ExecuteContract(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return execute(ctx, newRoot(stdout, stderr, contractCommands, opsStubs), args, stderr)
}

// contractCommands are the commands that work on .proto files alone.
func contractCommands() []*cobra.Command {
	return []*cobra.Command{newLintCmd(), newBizkeyCmd(), newGenerateCmd(), newBreakingCmd()}
}

// opsCommands are the commands that talk to brokers, databases and
// registries.
func opsCommands() []*cobra.Command {
	return []*cobra.Command{newRegistryCmd(), newDLQCmd(), newDedupCmd()}
}

func execute(ctx context.Context, root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	// Every message names the command it comes from, once:
	// "msgcontract lint: ...". Errors themselves do not repeat it.
	prefix := root.Name()
	if cmd != nil {
		prefix = cmd.CommandPath()
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !ee.silent && ee.err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prefix, ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
	return ExitUsage
}

func newRoot(stdout, stderr io.Writer, groups ...func() []*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:   "msgcontract",
		Short: "Effectively-once messaging from Protocol Buffers contracts",
		Long: `msgcontract makes asynchronous messages effectively once across Go, Java
and Python services. A .proto contract says how each event is identified
(its biz_key), how failures are classified (error-code ranges) and how
they are retried (backoff policy); msgcontract checks the contract,
generates producer and consumer code for every language from it, and
guards its evolution with a schema registry.

Exit codes: 0 success; 1 findings (lint errors, breaking changes, a key
that cannot be rendered); 2 usage errors or inputs that cannot be read
or compiled. Findings go to stdout, errors to stderr.`,
		Example: `  msgcontract lint --explain -I examples/proto examples/proto/shop/payment/v1/payment.proto
  msgcontract bizkey -I examples/proto --message shop.payment.v1.PaySuccess \
      --json '{"order_id":"20250101_0001","amount":10000}' examples/proto/shop/payment/v1/payment.proto
  msgcontract generate --lang go --out gen -I examples/proto examples/proto/shop/payment/v1/payment.proto`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Version,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr(err) })
	for _, group := range groups {
		root.AddCommand(group()...)
	}
	return root
}

// exactArgs and minArgs wrap cobra's validators so argument errors exit 2.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MinimumNArgs(n)(cmd, args); err != nil {
			return usageErr(fmt.Errorf("%w; see --help", err))
		}
		return nil
	}
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return usageErr(fmt.Errorf("%w; see --help", err))
		}
		return nil
	}
}
