package ops

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/registry/store"
)

// auditDB makes a registry store with four changes by three actors and
// returns its path and its entries.
func auditDB(t *testing.T) (string, []store.AuditEntry) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registry.db")
	st, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, c := range []struct {
		actor   store.Actor
		subject string
	}{
		{store.Actor{Principal: "user:alice", Method: "basic", Remote: "10.0.0.7:5100"}, "payment-value"},
		{store.Actor{Principal: "token:deploy-bot", Method: "bearer", Remote: "10.0.0.8:6200"}, "order-value"},
		{store.Actor{Principal: "user:alice", Method: "basic", Remote: "10.0.0.7:5101"}, "payment-value"},
		{store.Actor{Principal: "cert:payments", Method: "mtls", Remote: "10.0.0.9:443"}, "payment-value"},
	} {
		ctx := store.WithActor(context.Background(), c.actor)
		if _, err := st.Register(ctx, c.subject, store.Schema{Type: "PROTOBUF", Text: fmt.Sprintf(`syntax = "proto3"; message M%d {}`, i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	es, err := st.AuditEntries(context.Background(), store.AuditFilter{})
	if err != nil || len(es) != 4 {
		t.Fatalf("entries: %v, %v", es, err)
	}
	return path, es
}

// sqlExec changes the registry's database behind the store's back.
func sqlExec(t *testing.T, path, query string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TestRegistryAuditVerify is the acceptance test of the audit log: edits
// made to it in the database with SQL are found and named by
// registry audit verify, which exits 1, and an intact log exits 0 with
// its head.
func TestRegistryAuditVerify(t *testing.T) {
	wrongHead := strings.Repeat("ab", 32)
	tests := []struct {
		name   string
		tamper string // SQL run on the database first
		expect func(es []store.AuditEntry) string
		code   int
		stdout string // with %s for the head
		stderr []string
	}{
		{name: "intact", code: cli.ExitOK, stdout: "audit: 4 entries verified, head %s\n"},
		{name: "intact, the head expected", expect: func(es []store.AuditEntry) string { return es[3].Hash },
			code: cli.ExitOK, stdout: "audit: 4 entries verified, head %s\n"},
		{name: "a principal edited", tamper: `UPDATE audit_log SET principal = 'user:mallory' WHERE seq = 2`,
			code: cli.ExitFindings, stderr: []string{"msgcontract registry audit verify: ", "entry 2 was altered: its hash does not match its contents", "1 entry before it verified"}},
		{name: "a middle entry deleted", tamper: `DELETE FROM audit_log WHERE seq = 3`,
			code: cli.ExitFindings, stderr: []string{"entry 3 is missing (entries jump from 2 to 4)", "2 entries before it verified"}},
		{name: "the head differs from --expect-head", expect: func([]store.AuditEntry) string { return wrongHead },
			code: cli.ExitFindings, stderr: []string{"not the expected " + wrongHead, "hash of no entry"}},
		{name: "the newest entry deleted, caught by --expect-head", tamper: `DELETE FROM audit_log WHERE seq = 4`,
			expect: func(es []store.AuditEntry) string { return es[3].Hash },
			code:   cli.ExitFindings, stderr: []string{"(3 entries), not the expected", "hash of no entry"}},
		{name: "entries appended after the expected head", expect: func(es []store.AuditEntry) string { return es[1].Hash },
			code: cli.ExitFindings, stderr: []string{"it is entry 2's hash: 2 entries were appended after it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, es := auditDB(t)
			if tt.tamper != "" {
				sqlExec(t, path, tt.tamper)
			}
			args := []string{"registry", "audit", "verify", "--db", path}
			if tt.expect != nil {
				args = append(args, "--expect-head", tt.expect(es))
			}
			code, stdout, stderr := run(t, args...)
			want := ""
			if tt.stdout != "" {
				want = fmt.Sprintf(tt.stdout, es[3].Hash)
			}
			if code != tt.code || stdout != want {
				t.Errorf("exit %d (want %d), stdout %q (want %q), stderr %q", code, tt.code, stdout, want, stderr)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr %q does not say %q", stderr, s)
				}
			}
			if len(tt.stderr) == 0 && stderr != "" {
				t.Errorf("stderr %q, want none", stderr)
			}
		})
	}
}

// TestRegistryAuditUsage: usage errors exit 2 and name what is wrong, and
// neither command creates a database that is not there.
func TestRegistryAuditUsage(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-registry.db")
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"verify without --db", []string{"registry", "audit", "verify"}, "msgcontract registry audit verify: --db is required"},
		{"verify a missing file", []string{"registry", "audit", "verify", "--db", missing}, missing + ": no such file"},
		{"list a missing file", []string{"registry", "audit", "list", "--db", missing}, "msgcontract registry audit list: " + missing + ": no such file"},
		{"a malformed head", []string{"registry", "audit", "verify", "--db", missing, "--expect-head", "abc"}, `--expect-head "abc" is not a hash`},
		{"a malformed time", []string{"registry", "audit", "list", "--db", missing, "--since", "yesterday"}, `--since "yesterday": want an RFC 3339 time`},
		{"a negative limit", []string{"registry", "audit", "list", "--db", missing, "--limit", "-1"}, "--limit -1"},
		{"no subcommand", []string{"registry", "audit"}, "a subcommand is required: verify or list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tt.args...)
			if code != cli.ExitUsage || stdout != "" || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d (want 2), stdout %q (want none), stderr %q (want %q)", code, stdout, stderr, tt.stderr)
			}
		})
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("audit created %s (stat: %v); it must create nothing", missing, err)
	}
}

// TestRegistryAuditList selects entries by subject, principal and time,
// as a table and as JSON lines.
func TestRegistryAuditList(t *testing.T) {
	path, es := auditDB(t)
	// Give the entries known times, an hour apart from 09:00, and re-seal
	// nothing: list does not check the chain.
	for i := range es {
		sqlExec(t, path, fmt.Sprintf(`UPDATE audit_log SET at = '2026-12-05T%02d:00:00.000000000Z' WHERE seq = %d`, 9+i, i+1))
	}
	tests := []struct {
		name string
		args []string
		want []int64
	}{
		{"all", nil, []int64{1, 2, 3, 4}},
		{"subject", []string{"--subject", "payment-value"}, []int64{1, 3, 4}},
		{"principal", []string{"--principal", "user:alice"}, []int64{1, 3}},
		{"since", []string{"--since", "2026-12-05T10:00:00Z"}, []int64{2, 3, 4}},
		{"until", []string{"--until", "2026-12-05T10:30:00Z"}, []int64{1, 2}},
		{"since and until", []string{"--since", "2026-12-05T09:30:00Z", "--until", "2026-12-05T11:00:00Z"}, []int64{2, 3}},
		{"subject and principal", []string{"--subject", "payment-value", "--principal", "cert:payments"}, []int64{4}},
		{"a duration back from now", []string{"--since", "1h"}, nil},
		{"limit", []string{"--limit", "2"}, []int64{3, 4}},
		{"nothing", []string{"--subject", "nobody"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := append([]string{"registry", "audit", "list", "--db", path}, tt.args...)
			code, stdout, stderr := run(t, append(base, "--json")...)
			if code != 0 || stderr != "" {
				t.Fatalf("--json: exit %d, stderr %q", code, stderr)
			}
			var got []int64
			for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
				if line == "" {
					continue
				}
				var e struct {
					Seq    int64           `json:"seq"`
					Detail json.RawMessage `json:"detail"`
					Hash   string          `json:"hash"`
				}
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("--json line %q: %v", line, err)
				}
				if e.Hash != es[e.Seq-1].Hash || !strings.HasPrefix(string(e.Detail), `{"id":`) {
					t.Errorf("--json entry %d: %s", e.Seq, line)
				}
				got = append(got, e.Seq)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("--json: entries %v, want %v", got, tt.want)
			}

			code, stdout, stderr = run(t, base...)
			if code != 0 || stderr != "" {
				t.Fatalf("table: exit %d, stderr %q", code, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if !strings.HasPrefix(lines[0], "SEQ  TIME") || lines[len(lines)-1] != fmt.Sprintf("%d entr%s", len(tt.want), plural(len(tt.want), "y", "ies")) {
				t.Fatalf("table:\n%s", stdout)
			}
			var rows []int64
			for _, l := range lines[1 : len(lines)-1] {
				var seq int64
				fmt.Sscan(l, &seq)
				rows = append(rows, seq)
			}
			if fmt.Sprint(rows) != fmt.Sprint(tt.want) {
				t.Errorf("table: entries %v, want %v:\n%s", rows, tt.want, stdout)
			}
		})
	}
	_, stdout, _ := run(t, "registry", "audit", "list", "--db", path, "--limit", "1")
	for _, s := range []string{"cert:payments", "mtls", "10.0.0.9:443", "register", "payment-value", `{"id":4,"version":3}`, "2026-12-05T12:00:00.000Z"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("the table's row does not show %q:\n%s", s, stdout)
		}
	}
}

// TestRegistryAuditHelpTeaches: --help says what is recorded, how
// verification works, the exit codes, and gives examples.
func TestRegistryAuditHelpTeaches(t *testing.T) {
	for _, tt := range []struct {
		cmd  []string
		want []string
	}{
		{[]string{"registry", "audit"}, []string{"same database transaction", "delete-subject", "config-delete", "principal", "hash", "Examples:"}},
		{[]string{"registry", "audit", "verify"}, []string{"prev_hash", "64 zeros", "--expect-head", "Removing the newest entries", "Exit status: 0", "1 it\nis broken", "Examples:"}},
		{[]string{"registry", "audit", "list"}, []string{"--since", "duration back from now", "--json", "Exit status", "Examples:"}},
	} {
		code, stdout, _ := run(t, append(tt.cmd, "--help")...)
		for _, w := range tt.want {
			if code != 0 || !strings.Contains(stdout, w) {
				t.Errorf("%s --help (exit %d) does not say %q", strings.Join(tt.cmd, " "), code, w)
			}
		}
	}
}
