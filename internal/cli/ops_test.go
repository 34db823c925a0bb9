package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMsgcontractHandsOpsCommandsOver builds the two binaries as `make
// build` does and checks that msgcontract runs registry, dlq and dedup in
// msgcontract-ops (arguments, output and exit code passed through),
// explains what is missing when msgcontract-ops cannot be found, and does
// not carry the clients those commands need.
func TestMsgcontractHandsOpsCommandsOver(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	mc, ops := filepath.Join(bin, "msgcontract"), filepath.Join(bin, OpsBinary)
	for path, pkg := range map[string]string{mc: "./cmd/msgcontract", ops: "./cmd/" + OpsBinary} {
		build := exec.Command("go", "build", "-o", path, pkg)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	run := func(exe string, env []string, args ...string) (string, int) {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if exit, ok := err.(*exec.ExitError); ok {
			return string(out), exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}

	// Help, listed in msgcontract and answered in full by msgcontract-ops.
	out, code := run(mc, nil, "--help")
	for _, c := range []string{"registry", "dlq", "dedup", "doctor", "generate"} {
		if code != 0 || !strings.Contains(out, "\n  "+c+" ") {
			t.Fatalf("msgcontract --help (exit %d) does not list %s:\n%s", code, c, out)
		}
	}
	out, code = run(mc, nil, "registry", "serve", "--help")
	if code != 0 || !strings.Contains(out, "--max-compilations") {
		t.Fatalf("msgcontract registry serve --help: exit %d, not the serve command's flags:\n%s", code, out)
	}
	// A failing command: its message and exit code come through as
	// msgcontract-ops gives them.
	missing := filepath.Join(t.TempDir(), "q.db")
	out, code = run(mc, nil, "dlq", "list", "--queue", missing)
	want, wantCode := run(ops, nil, "dlq", "list", "--queue", missing)
	if code != ExitUsage || code != wantCode || out != want {
		t.Fatalf("msgcontract dlq list: exit %d %q, msgcontract-ops: exit %d %q", code, out, wantCode, want)
	}

	// Alone in a folder, with no msgcontract-ops on PATH either.
	alone := filepath.Join(t.TempDir(), "msgcontract")
	b, err := os.ReadFile(mc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	out, code = run(alone, []string{"PATH=" + t.TempDir()}, "dedup", "conflicts", "--db", "x.db")
	if code != ExitUsage || !strings.Contains(out, "msgcontract dedup: this command runs in msgcontract-ops") ||
		!strings.Contains(out, "go install github.com/msgcontract/msgcontract/cmd/msgcontract-ops@") {
		t.Fatalf("msgcontract dedup without msgcontract-ops: exit %d:\n%s", code, out)
	}
	// The contract commands still run in msgcontract itself.
	out, code = run(alone, []string{"PATH=" + t.TempDir()}, "lint", "-I", filepath.Join(root, "examples", "proto"),
		filepath.Join(root, "examples", "proto", "shop", "payment", "v1", "payment.proto"))
	if code != 0 {
		t.Fatalf("msgcontract lint alone: exit %d:\n%s", code, out)
	}

	// What the split is for: msgcontract links none of the broker clients,
	// the registry server, its store and database drivers, or the DLQ
	// code (breaking --against URL reads the registry through
	// registry/client and registry/subjectref, which link none of them).
	symbols := func(exe string) map[string]bool {
		out, err := exec.Command("go", "tool", "nm", exe).Output()
		if err != nil {
			t.Fatalf("go tool nm %s: %v", exe, err)
		}
		set := map[string]bool{}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				set[f[len(f)-1]] = true
			}
		}
		return set
	}
	inMC, inOps := symbols(mc), symbols(ops)
	for _, sym := range []string{
		"github.com/twmb/franz-go/pkg/kgo.NewClient",
		"github.com/labstack/echo/v4.New",
		"github.com/msgcontract/msgcontract/registry/api.New",
		"github.com/msgcontract/msgcontract/registry/console.New",
		"github.com/msgcontract/msgcontract/internal/dlqopen.Open",
		"github.com/msgcontract/msgcontract/registry/store.(*Store).Close",
		"github.com/mattn/go-sqlite3.(*SQLiteDriver).Open",
		"github.com/jackc/pgx/v5/stdlib.(*Driver).Open",
	} {
		if !inOps[sym] {
			t.Errorf("%s does not link %s: the check below would prove nothing", OpsBinary, sym)
		}
		if inMC[sym] {
			t.Errorf("msgcontract links %s; it belongs to %s alone", sym, OpsBinary)
		}
	}
}
