// Package cli implements the msgcontract command line: the contract
// commands (lint, bizkey, generate, breaking), each in a file of its own,
// the root they share with msgcontract-ops (Run), and the stand-ins that
// hand registry, dlq, dedup and doctor to msgcontract-ops (ops.go; the commands
// themselves are package ops). cmd/msgcontract only calls Execute.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

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

// Findings returns an error that exits 1 without printing more.
func Findings() error { return &exitError{code: ExitFindings, silent: true} }

// UsageErr returns an error that prints err and exits 2.
func UsageErr(err error) error { return &exitError{code: ExitUsage, err: err} }

// CannotCheck returns an error that exits 2 without printing more: the
// command has printed what it could not check (doctor), so that a script
// never takes an unchecked target for a clean one.
func CannotCheck() error { return &exitError{code: ExitUsage, silent: true} }

// Execute runs the msgcontract binary's CLI with args (without the
// program name) and returns the process exit code. The contract commands
// run in it; registry, dlq, dedup and doctor (the commands that talk to brokers,
// databases and registries, package ops) are handed to msgcontract-ops,
// so that the binary every build runs does not carry (and map into
// memory) their clients; see ops.go.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return Run(ctx, "msgcontract", args, stdout, stderr, ContractCommands, opsStubs)
}

// Run runs a CLI made of the given groups of commands: msgcontract's
// (Execute) or msgcontract-ops's (ops.Execute), which share the root, its
// help and its exit codes; program is the binary's name, as --version
// prints it.
func Run(ctx context.Context, program string, args []string, stdout, stderr io.Writer, groups ...func() []*cobra.Command) int {
	root := newRoot(program, stdout, stderr, groups...)
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

// ContractCommands are the commands that work on .proto files alone.
func ContractCommands() []*cobra.Command {
	return []*cobra.Command{newLintCmd(), newBizkeyCmd(), newGenerateCmd(), newBreakingCmd(), newIncludeCmd(), newInitCmd()}
}

func newRoot(program string, stdout, stderr io.Writer, groups ...func() []*cobra.Command) *cobra.Command {
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
that cannot be rendered, settings doctor reports); 2 usage errors, inputs
that cannot be read or compiled, or targets doctor could not check. Findings go to stdout, errors to stderr.`,
		Example: `  msgcontract lint --explain -I examples/proto examples/proto/shop/payment/v1/payment.proto
  msgcontract bizkey -I examples/proto --message shop.payment.v1.PaySuccess \
      --json '{"order_id":"20250101_0001","amount":10000}' examples/proto/shop/payment/v1/payment.proto
  msgcontract generate --lang go --out gen -I examples/proto examples/proto/shop/payment/v1/payment.proto`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Version,
	}
	// "msgcontract 1.2.3 (commit 0123abc)": the same line as
	// protoc-gen-msgcontract --version, the version second.
	root.SetVersionTemplate(buildinfo.Line(program) + "\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageErr(err) })
	for _, group := range groups {
		root.AddCommand(group()...)
	}
	return root
}

// ExactArgs and MinArgs wrap cobra's validators so argument errors exit 2.
func MinArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MinimumNArgs(n)(cmd, args); err != nil {
			return UsageErr(fmt.Errorf("%w; see --help", err))
		}
		return nil
	}
}

func ExactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return UsageErr(fmt.Errorf("%w; see --help", err))
		}
		return nil
	}
}

// ArgsBetween accepts min..max positional arguments; others exit 2.
func ArgsBetween(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.RangeArgs(min, max)(cmd, args); err != nil {
			return UsageErr(fmt.Errorf("%w; see --help", err))
		}
		return nil
	}
}

// ReadToken reads a bearer token from the first line of file ("" for no file).
func ReadToken(file string) (string, error) {
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	if token == "" {
		return "", fmt.Errorf("--token-file %s is empty; put the token on its first line", file)
	}
	return token, nil
}
