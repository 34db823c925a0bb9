package ops

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
)

func newDedupCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dedup",
		Short: cli.DedupShort,
		Long: `dedup reads what the runtime keeps next to the business data: the claim
table (msg_dedup) and the key conflicts (msg_dedup_conflict).

A key conflict is a message that arrived under a (biz_key, handler) already
claimed by a message with a different payload: two different facts under
one key, a producer bug. The policy is first wins: the claiming message
took effect, the later one was acknowledged without running the handler,
and the runtime recorded both messages' ids and payload hashes in the same
transaction.`,
		Example: `  msgcontract dedup conflicts --db .build/demo/payments.db
  msgcontract dedup conflicts --db postgres://user@127.0.0.1:5432/shop --handler record-payment --json
  msgcontract dedup conflicts --db mysql://user:secret@127.0.0.1:3306/shop --since 24h`,
	}
	cmd.AddCommand(newDedupConflictsCmd())
	return cmd
}

func newDedupConflictsCmd() *cobra.Command {
	var (
		dsn, table, since string
		flt               dedup.ConflictFilter
		asJSON            bool
	)
	cmd := &cobra.Command{
		Use:   "conflicts --db DSN [filters]",
		Short: "List recorded key conflicts, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if since != "" {
				d, err := time.ParseDuration(since)
				if err != nil {
					return cli.UsageErr(fmt.Errorf("--since %q: want a duration such as 24h: %w", since, err))
				}
				flt.Since = time.Now().Add(-d)
			}
			db, dialect, err := openBusinessDB(dsn)
			if err != nil {
				return err
			}
			defer db.Close()
			store, err := dedup.New(dedup.Config{DB: db, Dialect: dialect, Table: table})
			if err != nil {
				return cli.UsageErr(err)
			}
			cs, err := store.Conflicts(cmd.Context(), flt)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), cs)
			}
			writeConflicts(cmd.OutOrStdout(), cs)
			return nil
		},
	}
	cmd.Flags().StringVar(&dsn, "db", "", "the business database: a SQLite file (or sqlite:FILE), postgres://... or mysql://user:password@host:port/db")
	cmd.Flags().StringVar(&table, "table", dedup.DefaultTable, "the claim table; conflicts are in TABLE_conflict")
	cmd.Flags().StringVar(&flt.Handler, "handler", "", "only conflicts of this handler")
	cmd.Flags().StringVar(&flt.BizKey, "biz-key", "", "only conflicts of this biz_key")
	cmd.Flags().StringVar(&since, "since", "", "only conflicts seen within this duration, e.g. 24h")
	cmd.Flags().IntVar(&flt.Limit, "limit", dedup.DefaultConflictLimit, "most conflicts to list")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	return cmd
}

// openBusinessDB opens a business database by DSN: postgres:// or
// postgresql:// URLs through pgx, mysql:// URLs (MySQL, MariaDB) through
// mysqldb, anything else as an existing SQLite file.
func openBusinessDB(dsn string) (*sql.DB, sqldb.Dialect, error) {
	switch {
	case dsn == "":
		return nil, 0, cli.UsageErr(errors.New("--db is required: a SQLite file, a postgres:// or a mysql:// URL"))
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		db, err := pgdb.Open(dsn)
		if err != nil {
			return nil, 0, cli.UsageErr(err)
		}
		return db, sqldb.Postgres, nil
	case strings.HasPrefix(dsn, "mysql://"):
		db, err := mysqldb.Open(dsn)
		if err != nil {
			return nil, 0, cli.UsageErr(err)
		}
		return db, sqldb.MySQL, nil
	case strings.Contains(dsn, "://"):
		return nil, 0, cli.UsageErr(fmt.Errorf("--db %q: unsupported; use a SQLite file path, a postgres:// or a mysql:// URL", dsn))
	default:
		path := strings.TrimPrefix(dsn, "sqlite:")
		if _, err := os.Stat(path); err != nil {
			return nil, 0, cli.UsageErr(fmt.Errorf("--db %s: %w", path, err))
		}
		db, err := sqlitedb.Open(path)
		if err != nil {
			return nil, 0, cli.UsageErr(err)
		}
		return db, sqldb.SQLite, nil
	}
}

func writeConflicts(out io.Writer, cs []dedup.Conflict) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEEN AT\tHANDLER\tBIZ KEY\tMESSAGE ID\tPAYLOAD HASH\tWINNER MESSAGE ID\tWINNER PAYLOAD HASH\tWINNER CLAIMED AT")
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.12s\t%s\t%.12s\t%s\n", c.SeenAt.UTC().Format(time.RFC3339), c.Handler, c.BizKey,
			c.MessageID, c.PayloadHash, c.PriorMessageID, c.PriorPayloadHash, c.PriorClaimedAt.UTC().Format(time.RFC3339))
	}
	tw.Flush()
	fmt.Fprintf(out, "%d conflict%s\n", len(cs), cli.Plural(len(cs)))
}
