// Command msgcontract-ops runs the schema registry, operates dead-letter
// queues and dedup records and checks a deployment's settings:
// `msgcontract registry`, `dlq`, `dedup` and `doctor`, which the
// msgcontract binary hands to it (it answers every
// other msgcontract command too). It carries the broker, database and HTTP
// clients msgcontract leaves out: package internal/cli/ops.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/msgcontract/msgcontract/internal/cli/ops"
	"github.com/msgcontract/msgcontract/internal/profile"
	"github.com/msgcontract/msgcontract/registry/schema"
)

func main() {
	// registry serve compiles request schemas in this binary re-executed.
	schema.RunWorkerIfAsked()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := profile.Start()
	code := ops.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}
