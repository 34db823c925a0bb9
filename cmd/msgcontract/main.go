// Command msgcontract checks contracts and generates code from them
// (lint, bizkey, generate, breaking). registry, dlq, dedup and doctor run in
// msgcontract-ops, which it starts with the same arguments. See
// `msgcontract --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/internal/profile"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := profile.Start()
	code := cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}
