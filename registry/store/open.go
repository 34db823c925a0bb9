package store

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"sync"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
	_ "github.com/mattn/go-sqlite3"    // the database/sql driver "sqlite3"
)

// Store is a registry store. It is safe for concurrent use.
type Store struct {
	db *sql.DB
	// pg is set for PostgreSQL; SQLite otherwise.
	pg bool
	// wmu serializes this process's writers on SQLite, whose immediate
	// transactions and busy timeout serialize writers across processes.
	// PostgreSQL serializes writers of a subject with an advisory lock.
	wmu sync.Mutex
}

// sqliteSchema creates the tables, each only when missing, so that it runs
// on every open. audit_log is the audit log (audit.go): one row per
// change, seq 1, 2, 3..., each row's hash chained to the one before; a
// store written before it gets an empty log when opened.
const sqliteSchema = `
CREATE TABLE IF NOT EXISTS schemas (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  fingerprint TEXT NOT NULL UNIQUE,
  schema_type TEXT NOT NULL,
  schema_text TEXT NOT NULL,
  refs        TEXT NOT NULL,
  descriptor  BLOB,
  metadata    TEXT NOT NULL DEFAULT '',
  rule_set    TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS versions (
  subject   TEXT NOT NULL,
  version   INTEGER NOT NULL,
  schema_id INTEGER NOT NULL REFERENCES schemas(id),
  deleted   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (subject, version)
);
CREATE INDEX IF NOT EXISTS versions_schema ON versions(schema_id);
CREATE TABLE IF NOT EXISTS config (
  subject  TEXT PRIMARY KEY,
  level    TEXT NOT NULL,
  settings TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS modes (
  subject TEXT PRIMARY KEY,
  mode    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_log (
  seq       INTEGER PRIMARY KEY,
  at        TEXT NOT NULL,
  principal TEXT NOT NULL,
  method    TEXT NOT NULL,
  remote    TEXT NOT NULL,
  action    TEXT NOT NULL,
  subject   TEXT NOT NULL,
  detail    TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_subject ON audit_log(subject);
`

// postgresSchema is sqliteSchema in PostgreSQL's types. Ids come from a
// sequence, which never hands out an id twice, as AUTOINCREMENT does not.
const postgresSchema = `
CREATE TABLE IF NOT EXISTS schemas (
  id          BIGSERIAL PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
  schema_type TEXT NOT NULL,
  schema_text TEXT NOT NULL,
  refs        TEXT NOT NULL,
  descriptor  BYTEA,
  metadata    TEXT NOT NULL DEFAULT '',
  rule_set    TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS versions (
  subject   TEXT NOT NULL,
  version   INTEGER NOT NULL,
  schema_id BIGINT NOT NULL REFERENCES schemas(id),
  deleted   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (subject, version)
);
CREATE INDEX IF NOT EXISTS versions_schema ON versions(schema_id);
CREATE TABLE IF NOT EXISTS config (
  subject  TEXT PRIMARY KEY,
  level    TEXT NOT NULL,
  settings TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS modes (
  subject TEXT PRIMARY KEY,
  mode    TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS audit_log (
  seq       BIGINT PRIMARY KEY,
  at        TEXT NOT NULL,
  principal TEXT NOT NULL,
  method    TEXT NOT NULL,
  remote    TEXT NOT NULL,
  action    TEXT NOT NULL,
  subject   TEXT NOT NULL,
  detail    TEXT NOT NULL,
  prev_hash TEXT NOT NULL,
  hash      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_subject ON audit_log(subject);
`

// IsPostgres reports whether a --db value names a PostgreSQL database
// (a postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens (creating tables if needed) the store: a PostgreSQL database
// for a postgres:// URL, where several registry instances share one store,
// else the SQLite file at dsn.
func Open(dsn string) (*Store, error) {
	return open(dsn, "FULL")
}

// open is Open with SQLite's synchronous setting. FULL syncs the WAL on
// every commit, so an acknowledged id survives a power loss and is never
// handed out twice; NORMAL (only for the benchmark that prices FULL) may
// lose the last commits on power loss.
func open(dsn, synchronous string) (*Store, error) {
	if IsPostgres(dsn) {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			return nil, err
		}
		if _, err := db.Exec(postgresSchema); err != nil {
			db.Close()
			return nil, fmt.Errorf("open registry store: %w", err)
		}
		st := &Store{db: db, pg: true}
		if err := st.migrate(); err != nil {
			db.Close()
			return nil, fmt.Errorf("open registry store: %w", err)
		}
		return st, nil
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", "10000")
	q.Set("_txlock", "immediate")
	q.Set("_synchronous", synchronous)
	q.Set("_foreign_keys", "1")
	db, err := sql.Open("sqlite3", "file:"+dsn+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(sqliteSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open registry store %s: %w", dsn, err)
	}
	st := &Store{db: db}
	if err := st.migrate(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open registry store %s: %w", dsn, err)
	}
	return st, nil
}

// added are the columns added to tables after their first release: a
// store written before them gets them, empty, when opened, and keeps
// every row.
var added = []struct{ table, column, decl string }{
	{"config", "settings", "TEXT NOT NULL DEFAULT ''"},
	{"schemas", "metadata", "TEXT NOT NULL DEFAULT ''"},
	{"schemas", "rule_set", "TEXT NOT NULL DEFAULT ''"},
}

// migrate adds the columns of added that the store's tables lack.
func (s *Store) migrate() error {
	for _, a := range added {
		has, err := s.hasColumn(a.table, a.column)
		if err != nil {
			return err
		}
		if has {
			continue
		}
		ifNot := ""
		if s.pg {
			ifNot = "IF NOT EXISTS "
		}
		if _, err := s.db.Exec(`ALTER TABLE ` + a.table + ` ADD COLUMN ` + ifNot + a.column + ` ` + a.decl); err != nil {
			// Another process opening the store may have added it first.
			if has, _ := s.hasColumn(a.table, a.column); !has {
				return fmt.Errorf("add column %s.%s: %w", a.table, a.column, err)
			}
		}
	}
	return nil
}

func (s *Store) hasColumn(table, column string) (bool, error) {
	var n int
	var err error
	if s.pg {
		err = s.db.QueryRow(`SELECT COUNT(*) FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2`, table, column).Scan(&n)
	} else {
		err = s.db.QueryRow(`SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n)
	}
	return n > 0, err
}

// Shared reports whether other registry instances may write to the same
// store, so that nothing read from it may be cached as final.
func (s *Store) Shared() bool { return s.pg }

// q rewrites a query written with ? placeholders for the store's driver.
func (s *Store) q(query string) string {
	if !s.pg {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// begin starts a writer transaction for subject. On SQLite it takes this
// process's writer lock (released by the returned func) and an immediate
// transaction; on PostgreSQL a transaction-scoped advisory lock on the
// subject, so registrations of one subject from any instance serialize.
func (s *Store) begin(ctx context.Context, subject string) (*sql.Tx, func(), error) {
	if !s.pg {
		s.wmu.Lock()
	}
	unlock := func() {
		if !s.pg {
			s.wmu.Unlock()
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	if s.pg {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "msgcontract-registry:"+subject); err != nil {
			tx.Rollback()
			return nil, nil, err
		}
	}
	return tx, func() { tx.Rollback(); unlock() }, nil
}
