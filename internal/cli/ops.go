package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"
)

// OpsBinary is the program that carries registry, dlq, dedup and doctor. The
// msgcontract binary, which builds run on every change, keeps the
// contract commands only: the Kafka, NATS, PostgreSQL and MySQL clients,
// the HTTP server and SQLite's C library are a third of a binary whose
// pages the kernel maps whole, and `generate` paid for them in resident
// memory (#21). msgcontract hands those commands, arguments as they
// are, to OpsBinary: found beside its own executable first, then on PATH.
const OpsBinary = "msgcontract-ops"

// The short help of the commands msgcontract hands over, shared by the
// commands themselves and msgcontract's stand-ins for them.
const (
	RegistryShort = "Run or talk to the schema registry"
	DLQShort      = "Inspect, replay and purge dead-lettered messages"
	DedupShort    = "Inspect the runtime's dedup records in a business database"
	DoctorShort   = "Report broker and database settings that can lose acknowledged messages"
)

// opsStubs stand in msgcontract for the commands of OpsBinary: listed in
// its help with their own short help, handed over when run (--help
// included, which OpsBinary answers in full).
func opsStubs() []*cobra.Command {
	var cmds []*cobra.Command
	for _, c := range []struct{ use, short string }{
		{"registry", RegistryShort}, {"dlq", DLQShort}, {"dedup", DedupShort}, {"doctor", DoctorShort},
	} {
		cmds = append(cmds, &cobra.Command{
			Use:   c.use,
			Short: c.short,
			Long: c.short + ".\n\n" + c.use + " runs in " + OpsBinary + ", which msgcontract starts with the same\n" +
				"arguments: `msgcontract " + c.use + " --help` shows its commands and flags.",
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				return handOver(append([]string{c.use}, args...))
			},
		})
	}
	return cmds
}

// handOver replaces this process with OpsBinary run with args (see
// ops_unix.go); it returns only when that cannot be done.
func handOver(args []string) error {
	path, err := findOps()
	if err != nil {
		return UsageErr(err)
	}
	return execOps(path, args)
}

// findOps finds OpsBinary beside this executable (as `make build` and
// `go install ./cmd/...` place it), else on PATH.
func findOps() (string, error) {
	self, err := os.Executable()
	if err == nil {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		beside := filepath.Join(filepath.Dir(self), OpsBinary)
		if info, err := os.Stat(beside); err == nil && !info.IsDir() {
			return beside, nil
		}
	}
	if path, err := exec.LookPath(OpsBinary); err == nil {
		return path, nil
	} else if !errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("%s: %w", OpsBinary, err)
	}
	return "", fmt.Errorf("this command runs in %s, which is neither beside this program (%s) nor on PATH; "+
		"install it beside msgcontract: go install github.com/msgcontract/msgcontract/cmd/%s@<the same version> (make build puts both in bin/)",
		OpsBinary, self, OpsBinary)
}
