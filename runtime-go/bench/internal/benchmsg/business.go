package benchmsg

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb/mysqltest"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
)

// PGEnv names the PostgreSQL server of the bench programs
// (scripts/with-postgres.sh sets it).
const PGEnv = "MSGCONTRACT_PG_DSN"

// Business is a bench side's business database, with the effects table in
// it.
type Business struct {
	*sql.DB
	Dialect sqldb.Dialect
	drop    func() error
}

// OpenBusiness opens a fresh business database of kind: "sqlite", the
// file business.db in dir; "postgres", a schema of its own on the server
// $MSGCONTRACT_PG_DSN names; "mysql", a database of its own on the server
// $MSGCONTRACT_MYSQL_DSN names. Close drops the schema or database.
func OpenBusiness(ctx context.Context, kind, dir string) (*Business, error) {
	b := &Business{drop: func() error { return nil }}
	var err error
	switch kind {
	case "sqlite":
		b.Dialect = sqldb.SQLite
		b.DB, err = OpenEffects(ctx, filepath.Join(dir, "business.db"))
		return b, err
	case "postgres":
		b.Dialect = sqldb.Postgres
		base := os.Getenv(PGEnv)
		if base == "" {
			return nil, fmt.Errorf("postgres: %s is unset: run under scripts/with-postgres.sh", PGEnv)
		}
		var dsn, schema string
		if dsn, schema, err = FreshPostgres(base); err != nil {
			return nil, err
		}
		b.drop = func() error {
			admin, err := pgdb.Open(base)
			if err != nil {
				return err
			}
			defer admin.Close()
			_, err = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
			return err
		}
		b.DB, err = pgdb.Open(dsn)
	case "mysql":
		b.Dialect = sqldb.MySQL
		base := os.Getenv(mysqltest.Env)
		if base == "" {
			return nil, fmt.Errorf("mysql: %s is unset: run under scripts/with-mariadb.sh", mysqltest.Env)
		}
		var dsn string
		if dsn, b.drop, err = mysqltest.Create(base); err != nil {
			return nil, err
		}
		b.DB, err = mysqldb.Open(dsn)
	default:
		return nil, fmt.Errorf("database %q: want sqlite, postgres or mysql", kind)
	}
	if err == nil {
		err = CreateEffects(ctx, b.DB)
	}
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Close closes the database and drops what OpenBusiness created on a
// server.
func (b *Business) Close() error {
	if b.DB != nil {
		b.DB.Close()
	}
	return b.drop()
}

// FreshPostgres creates a schema of its own in dsn's database and returns a
// DSN using it, and the schema's name.
func FreshPostgres(dsn string) (string, string, error) {
	admin, err := pgdb.Open(dsn)
	if err != nil {
		return "", "", err
	}
	defer admin.Close()
	schema := fmt.Sprintf("bench_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		return "", "", err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", "", fmt.Errorf("%s must be a postgres:// URL: %w", PGEnv, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), schema, nil
}

// Durability names the server of db and the settings that decide whether
// a commit it acknowledged survives a crash of the machine, as the server
// reports them, e.g. "PostgreSQL 17.2: fsync=on synchronous_commit=on
// full_page_writes=on". SQLite reports its synchronous mode.
func Durability(ctx context.Context, db *sql.DB, d sqldb.Dialect) (string, error) {
	var name string
	var settings []string
	show := func(format, q string) error {
		var v string
		if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil {
			return err
		}
		settings = append(settings, fmt.Sprintf(format, v))
		return nil
	}
	var qs [][2]string
	switch d {
	case sqldb.Postgres:
		name = "PostgreSQL"
		qs = [][2]string{{"%s:", "SHOW server_version"}, {"fsync=%s", "SHOW fsync"},
			{"synchronous_commit=%s", "SHOW synchronous_commit"}, {"full_page_writes=%s", "SHOW full_page_writes"}}
	case sqldb.MySQL:
		qs = [][2]string{{"%s:", "SELECT VERSION()"},
			{"innodb_flush_log_at_trx_commit=%s", "SELECT @@innodb_flush_log_at_trx_commit"},
			{"innodb_doublewrite=%s", "SELECT @@innodb_doublewrite"}, {"log_bin=%s", "SELECT @@log_bin"}}
	default:
		name = "SQLite"
		qs = [][2]string{{"%s:", "SELECT sqlite_version()"}, {"synchronous=%s", "PRAGMA synchronous"},
			{"journal_mode=%s", "PRAGMA journal_mode"}}
	}
	for _, q := range qs {
		if err := show(q[0], q[1]); err != nil {
			return "", fmt.Errorf("durability: %s: %w", q[1], err)
		}
	}
	if d == sqldb.MySQL {
		name = "MySQL"
		if strings.Contains(settings[0], "MariaDB") {
			name = "MariaDB"
		}
	}
	return name + " " + strings.Join(settings, " "), nil
}

// ServerName is the short name of the server of a Durability line:
// postgres, mariadb, mysql or sqlite.
func ServerName(durability string) string {
	name, _, _ := strings.Cut(durability, " ")
	if name == "PostgreSQL" {
		return "postgres"
	}
	return strings.ToLower(name)
}
