package ops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/internal/cli"
)

// TestOpsExitCodesAndStreams is package cli's TestExitCodesAndStreams for
// the commands here: errors on stderr, prefixed once with the command,
// exit 2 for input that cannot be read, and nothing created on the way.
func TestOpsExitCodesAndStreams(t *testing.T) {
	missingQueue := filepath.Join(t.TempDir(), "no-such-queue.db")
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"dlq list on a missing queue", []string{"dlq", "list", "--queue", missingQueue}, cli.ExitUsage,
			"msgcontract dlq list: " + missingQueue + ": no such file"},
		{"registry serve without --db", []string{"registry", "serve"}, cli.ExitUsage, "msgcontract registry serve: --db is required"},
		{"dedup without a subcommand's flags", []string{"dedup", "conflicts"}, cli.ExitUsage, "msgcontract dedup conflicts: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			if code != tt.code || stdout != "" || !strings.Contains(stderr, tt.stderr) || strings.Contains(stderr, "msgcontract: msgcontract") {
				t.Errorf("exit %d (want %d), stdout %q (want none), stderr %q (want %q once)", code, tt.code, stdout, stderr, tt.stderr)
			}
		})
	}
	if _, err := os.Stat(missingQueue); !os.IsNotExist(err) {
		t.Errorf("dlq list created %s (stat: %v); it must create nothing", missingQueue, err)
	}
}
