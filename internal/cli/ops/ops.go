// Package ops holds the commands that talk to brokers, databases and
// registries: registry (serve, push, check), dlq, dedup and doctor. They run in
// msgcontract-ops, beside the contract commands of package cli, so that
// the msgcontract binary, which every build runs, links none of their
// clients (cli.Execute hands them over).
package ops

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/internal/cli"
)

// Commands are registry, dlq, dedup and doctor.
func Commands() []*cobra.Command {
	return []*cobra.Command{newRegistryCmd(), newDLQCmd(), newDedupCmd(), newDoctorCmd()}
}

// Execute runs msgcontract-ops's CLI (every command: the contract ones and
// these) with args, without the program name, and returns the process
// exit code.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cli.Run(ctx, "msgcontract-ops", args, stdout, stderr, cli.ContractCommands, Commands)
}
