package ops

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/registry/store"
)

func newRegistryAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Verify or list the registry's audit log of changes",
		Long: `audit reads the registry store's audit log: one entry for every change to
the registry, written in the same database transaction as the change, so
that no change is committed without its entry, nor an entry without its
change.

What is recorded: registering a new version (register: subject, version,
schema id; registering a schema the subject already has records nothing),
importing one (import), deleting a subject or a version (delete-subject,
delete-version: soft or permanent, the versions and schema ids affected),
setting or removing a compatibility config or a mode (config,
config-delete, mode, mode-delete: the old and the new value; subject "" is
the global one). Each entry has a sequence number (1, 2, 3...), the time in
UTC, who asked (principal, authentication method, client address; "local"
for a program using the store directly), the action, the subject and the
detail as a JSON object.

Each entry's hash (SHA-256) covers its contents and the previous entry's
hash, so editing, inserting or removing an entry in the database breaks the
chain from there on; verify finds the first entry where it breaks.

Subcommands: verify, list. Both only read; --db must exist.`,
		Example: `  msgcontract registry audit verify --db registry.db
  msgcontract registry audit list --db registry.db --subject payment-value --since 24h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cli.UsageErr(errors.New("a subcommand is required: verify or list; see --help"))
		},
	}
	cmd.AddCommand(newRegistryAuditVerifyCmd(), newRegistryAuditListCmd())
	return cmd
}

// openExistingStore opens the registry store db for reading its audit
// log. A SQLite file that does not exist is a usage error, not a new empty
// store: a mistyped path would otherwise verify as an empty log.
func openExistingStore(db string) (*store.Store, error) {
	if db == "" {
		return nil, cli.UsageErr(errors.New("--db is required: the SQLite file or postgres:// URL the registry stores its schemas in (registry serve's --db)"))
	}
	if !store.IsPostgres(db) {
		if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
			return nil, cli.UsageErr(fmt.Errorf("%s: no such file; name the registry's database, as registry serve's --db does", db))
		} else if err != nil {
			return nil, cli.UsageErr(err)
		}
	}
	st, err := store.Open(db)
	if err != nil {
		return nil, cli.UsageErr(err)
	}
	return st, nil
}

func newRegistryAuditVerifyCmd() *cobra.Command {
	var db, expect string
	cmd := &cobra.Command{
		Use:   "verify --db FILE|URL [--expect-head HASH]",
		Short: "Check that the audit log's hash chain is intact",
		Long: `verify reads the audit log from its first entry and checks that the entries
are numbered 1, 2, 3... without a gap, that each entry's hash matches its
contents, and that each entry's prev_hash is the hash of the entry before
it (64 zeros for the first). It prints

  audit: N entries verified, head HASH

where HASH is the newest entry's hash. When an entry was edited, removed or
inserted in the database, it names the first one where the chain breaks on
stderr, e.g. "entry 17 was altered: its hash does not match its contents",
"entry 17 is missing (entries jump from 16 to 18)", "entry 17 does not
follow entry 16: prev_hash differs".

Removing the newest entries leaves a shorter chain that is still intact:
the chain alone cannot show it. Record the head hash somewhere the
database's writers cannot change (a ticket, a build log, another system)
and pass it later as --expect-head: verify then also fails when the head
is another hash, and says whether the recorded one is still in the log
(entries were appended after it) or not (entries were removed or the log
rewritten).

Exit status: 0 the chain is intact (and its head is --expect-head); 1 it
is broken, or the head differs from --expect-head; 2 a usage error or a
store that cannot be opened or read.`,
		Example: `  msgcontract registry audit verify --db registry.db
  msgcontract registry audit verify --db postgres://registry@db:5432/registry
  msgcontract registry audit verify --db registry.db --expect-head 3f5a...c2e1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			expect = strings.ToLower(strings.TrimSpace(expect))
			if expect != "" && !isHash(expect) {
				return cli.UsageErr(fmt.Errorf("--expect-head %q is not a hash: want the 64 hex digits verify printed as the head", expect))
			}
			st, err := openExistingStore(db)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx := cmd.Context()
			r, err := st.VerifyAudit(ctx)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			if !r.OK() {
				fmt.Fprintf(stderr, "%s: the audit log of %s is broken: %s; %d entr%s before it verified, head %s. The log was changed outside the registry: compare the database with a backup to find what was done\n",
					cmd.CommandPath(), db, r.Problem, r.Entries, plural(r.Entries, "y", "ies"), r.Head)
				return cli.Findings()
			}
			if expect != "" && r.Head != expect {
				es, err := st.AuditEntries(ctx, store.AuditFilter{})
				if err != nil {
					return err
				}
				where := "it is the hash of no entry in the log: entries recorded before were removed from its end, or the log was rewritten; compare the database with a backup"
				for _, e := range es {
					if e.Hash == expect {
						n := len(es) - int(e.Seq)
						where = fmt.Sprintf("it is entry %d's hash: %d entr%s appended after it (see audit list); if they are expected, record the new head", e.Seq, n, plural(n, "y was", "ies were"))
					}
				}
				fmt.Fprintf(stderr, "%s: the head of the audit log of %s is %s (%d entries), not the expected %s: %s\n",
					cmd.CommandPath(), db, r.Head, r.Entries, expect, where)
				return cli.Findings()
			}
			fmt.Fprintf(cmd.OutOrStdout(), "audit: %d entr%s verified, head %s\n", r.Entries, plural(r.Entries, "y", "ies"), r.Head)
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "the registry's SQLite database file, or a postgres:// URL (required)")
	cmd.Flags().StringVar(&expect, "expect-head", "", "fail unless the newest entry's hash is this one, recorded from an earlier verify")
	return cmd
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

func newRegistryAuditListCmd() *cobra.Command {
	var (
		db, since, until string
		f                store.AuditFilter
		asJSON           bool
	)
	cmd := &cobra.Command{
		Use:   "list --db FILE|URL [--subject S] [--principal P] [--since T] [--until T] [--limit N] [--json]",
		Short: "List the registry's audit log entries",
		Long: `list prints the audit log's entries, oldest first, as an aligned table:
seq, time (UTC), principal, method, remote address, action, subject and
detail ("-" for empty; "(global)" for the global config and mode). With
--json it prints one JSON object per line instead, with every field of the
entry (detail as an object, prev_hash and hash included).

--subject and --principal select entries exactly (a subject of the default
context also matches its ":.:" form); --since and --until bound the time,
both inclusive, each an RFC 3339 time (2026-12-05T09:00:00Z) or a duration
back from now (24h, 90m); --limit keeps the newest N.

list does not check the chain; verify does.

Exit status: 0 listed (also when nothing matched); 2 a usage error or a
store that cannot be opened or read.`,
		Example: `  msgcontract registry audit list --db registry.db
  msgcontract registry audit list --db registry.db --subject payment-value --since 24h
  msgcontract registry audit list --db registry.db --principal user:alice --since 2026-12-01T00:00:00Z --until 2026-12-02T00:00:00Z
  msgcontract registry audit list --db registry.db --limit 20 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			now := time.Now()
			var err error
			if f.Since, err = auditTime("--since", since, now); err != nil {
				return err
			}
			if f.Until, err = auditTime("--until", until, now); err != nil {
				return err
			}
			if f.Limit < 0 {
				return cli.UsageErr(fmt.Errorf("--limit %d: want a positive number of entries, or 0 for all", f.Limit))
			}
			st, err := openExistingStore(db)
			if err != nil {
				return err
			}
			defer st.Close()
			es, err := st.AuditEntries(cmd.Context(), f)
			if err != nil {
				return err
			}
			if asJSON {
				return printAuditJSON(cmd.OutOrStdout(), es)
			}
			printAuditTable(cmd.OutOrStdout(), es)
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "the registry's SQLite database file, or a postgres:// URL (required)")
	cmd.Flags().StringVar(&f.Subject, "subject", "", "only this subject's entries")
	cmd.Flags().StringVar(&f.Principal, "principal", "", `only this principal's entries (e.g. user:alice, token:deploy-bot, local)`)
	cmd.Flags().StringVar(&since, "since", "", "only entries at or after T: RFC 3339, or a duration back from now (24h)")
	cmd.Flags().StringVar(&until, "until", "", "only entries at or before T: RFC 3339, or a duration back from now (1h)")
	cmd.Flags().IntVar(&f.Limit, "limit", 0, "only the newest N entries (0: all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per entry and line")
	return cmd
}

// auditTime reads a --since/--until value: an RFC 3339 time, or a
// duration back from now. "" is the zero time (no bound).
func auditTime(flag, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, cli.UsageErr(fmt.Errorf("%s %q: want an RFC 3339 time (2026-12-05T09:00:00Z) or a duration back from now (24h, 90m)", flag, v))
}

func printAuditTable(out io.Writer, es []store.AuditEntry) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tPRINCIPAL\tMETHOD\tREMOTE\tACTION\tSUBJECT\tDETAIL")
	for _, e := range es {
		subject := dash(e.Subject)
		if e.Subject == "" && (strings.HasPrefix(e.Action, "config") || strings.HasPrefix(e.Action, "mode")) {
			subject = "(global)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, e.At.Format("2006-01-02T15:04:05.000Z07:00"),
			dash(e.Principal), dash(e.Method), dash(e.Remote), e.Action, subject, oneLine(e.Detail, 120))
	}
	tw.Flush()
	fmt.Fprintf(out, "%d entr%s\n", len(es), plural(len(es), "y", "ies"))
}

// auditJSON is an entry as list --json prints it.
type auditJSON struct {
	Seq       int64           `json:"seq"`
	At        string          `json:"at"`
	Principal string          `json:"principal"`
	Method    string          `json:"method"`
	Remote    string          `json:"remote"`
	Action    string          `json:"action"`
	Subject   string          `json:"subject"`
	Detail    json.RawMessage `json:"detail"`
	PrevHash  string          `json:"prev_hash"`
	Hash      string          `json:"hash"`
}

func printAuditJSON(out io.Writer, es []store.AuditEntry) error {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for _, e := range es {
		j := auditJSON{Seq: e.Seq, At: e.At.Format(time.RFC3339Nano), Principal: e.Principal, Method: e.Method, Remote: e.Remote,
			Action: e.Action, Subject: e.Subject, Detail: json.RawMessage(e.Detail), PrevHash: e.PrevHash, Hash: e.Hash}
		if !json.Valid(j.Detail) {
			// An entry edited in the database: show its detail as text.
			j.Detail, _ = json.Marshal(e.Detail)
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}
