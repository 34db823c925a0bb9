// Package sqldb holds what the runtime's database/sql users share: the SQL
// dialects it speaks and an opener for SQLite with the settings concurrent
// consumers need.
//
// Statements shared by both dialects use $1, $2, ... placeholders, which
// PostgreSQL (pgx) and SQLite (go-sqlite3) both accept. SQLite numbers
// "$N" parameters by first appearance, not by N, so a shared statement
// must mention $1, $2, ... first in that order. SQLite-only statements use
// ?N, which SQLite binds by N. Only DDL differs by dialect.
package sqldb

import (
	"context"
	"database/sql"
	"fmt"
)

// Dialect is the SQL flavour of a database.
type Dialect int

const (
	// SQLite via github.com/mattn/go-sqlite3 (driver name "sqlite3").
	SQLite Dialect = iota + 1
	// Postgres via github.com/jackc/pgx/v5/stdlib (driver name "pgx").
	Postgres
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// Validate reports an unknown dialect.
func (d Dialect) Validate() error {
	if d != SQLite && d != Postgres {
		return fmt.Errorf("sqldb: unknown dialect %d: use sqldb.SQLite or sqldb.Postgres", int(d))
	}
	return nil
}

// Blob is the binary column type of the dialect.
func (d Dialect) Blob() string {
	if d == Postgres {
		return "BYTEA"
	}
	return "BLOB"
}

// Serial is the auto-increment primary key column of the dialect.
func (d Dialect) Serial() string {
	if d == Postgres {
		return "BIGSERIAL PRIMARY KEY"
	}
	return "INTEGER PRIMARY KEY AUTOINCREMENT"
}

// ClusteredKey is the table option that stores rows in primary key order
// where the dialect needs one: SQLite's WITHOUT ROWID, which saves a
// second B-tree (and its pages in every commit) for tables with a
// composite key.
func (d Dialect) ClusteredKey() string {
	if d == SQLite {
		return " WITHOUT ROWID"
	}
	return ""
}

// Rebind rewrites a statement written with $1, $2, ... placeholders for
// the dialect. SQLite and PostgreSQL take it as it is.
func (d Dialect) Rebind(q string) string { return q }

// Migrate runs DDL statements in one transaction. On PostgreSQL it first
// takes a transaction-scoped advisory lock, because concurrent
// CREATE ... IF NOT EXISTS from several starting processes can otherwise
// fail with a unique violation in the catalog.
func Migrate(ctx context.Context, db *sql.DB, d Dialect, stmts ...string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if d == Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(727272)`); err != nil {
			return err
		}
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return tx.Commit()
}
