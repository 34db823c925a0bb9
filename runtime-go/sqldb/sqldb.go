// Package sqldb holds what the runtime's database/sql users share: the SQL
// dialects it speaks and an opener for SQLite with the settings concurrent
// consumers need.
//
// Statements shared by the dialects use $1, $2, ... placeholders, which
// PostgreSQL (pgx) and SQLite (go-sqlite3) accept, and which MySQL's
// driver adapter (sqldb/mysqldb) rewrites to ? with the arguments
// reordered. SQLite numbers "$N" parameters by first appearance, not by
// N, so a shared statement must mention $1, $2, ... first in that order.
// SQLite-only statements use ?N, which SQLite binds by N. "Insert unless
// the key exists" and locking reads differ by dialect: see the Dialect
// methods. The runtime's DDL differs too; it lives in contracts/sql, served
// by sqldb/ddl.
package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Dialect is the SQL flavour of a database.
type Dialect int

const (
	// SQLite via github.com/mattn/go-sqlite3 (driver name "sqlite3").
	SQLite Dialect = iota + 1
	// Postgres via github.com/jackc/pgx/v5/stdlib (driver name "pgx").
	Postgres
	// MySQL and MariaDB (InnoDB) via sqldb/mysqldb, which wraps
	// github.com/go-sql-driver/mysql.
	MySQL
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case Postgres:
		return "postgres"
	case MySQL:
		return "mysql"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// Validate reports an unknown dialect.
func (d Dialect) Validate() error {
	if d != SQLite && d != Postgres && d != MySQL {
		return fmt.Errorf("sqldb: unknown dialect %d: use sqldb.SQLite, sqldb.Postgres or sqldb.MySQL", int(d))
	}
	return nil
}

// OnConflictDoNothing is the clause that makes an INSERT keep an existing
// row with the same key (cols, the key's columns) and affect no row. On
// MySQL it is ON DUPLICATE KEY UPDATE with a no-op assignment (not INSERT
// IGNORE, which would also turn a too-long value into a warning); its
// "0 rows affected" needs clientFoundRows off, as mysqldb.Open sets it.
func (d Dialect) OnConflictDoNothing(cols string) string {
	if d == MySQL {
		first, _, _ := strings.Cut(cols, ",")
		first = strings.TrimSpace(first)
		return " ON DUPLICATE KEY UPDATE " + first + " = " + first
	}
	return " ON CONFLICT (" + cols + ") DO NOTHING"
}

// LockingRead is the suffix of a SELECT that must see the latest
// committed row even in a transaction's later statements: on MySQL,
// whose default REPEATABLE READ would otherwise read the transaction's
// first snapshot, FOR UPDATE. PostgreSQL's READ COMMITTED and SQLite's
// single writer read the latest row anyway.
func (d Dialect) LockingRead() string {
	if d == MySQL {
		return " FOR UPDATE"
	}
	return ""
}

// Rebind rewrites a statement written with $1, $2, ... placeholders for
// the dialect. Every dialect takes it as it is: on MySQL the driver
// adapter (mysqldb) rewrites it.
func (d Dialect) Rebind(q string) string { return q }

// Migrate runs DDL statements in one transaction. On PostgreSQL it first
// takes a transaction-scoped advisory lock, because concurrent
// CREATE ... IF NOT EXISTS from several starting processes can otherwise
// fail with a unique violation in the catalog. On MySQL, where DDL
// commits implicitly, it runs the statements on one connection holding a
// named lock (GET_LOCK) instead, and skips a "CREATE INDEX <name> ON
// <table> (...)" whose index exists (MySQL has no CREATE INDEX IF NOT
// EXISTS; the runtime's own tables declare their indexes inline).
func Migrate(ctx context.Context, db *sql.DB, d Dialect, stmts ...string) error {
	if d == MySQL {
		return migrateMySQL(ctx, db, stmts)
	}
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

func migrateMySQL(ctx context.Context, db *sql.DB, stmts []string) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT GET_LOCK('msgcontract_migrate', 60)`).Scan(&got); err != nil {
		return err
	}
	if got.Int64 != 1 {
		return fmt.Errorf("sqldb: migrate: the lock msgcontract_migrate was not free within 60 s")
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DO RELEASE_LOCK('msgcontract_migrate')`)
	for _, s := range stmts {
		// CREATE INDEX <name> ON <table> (...)
		if f := strings.Fields(s); len(f) > 4 && f[0] == "CREATE" && f[1] == "INDEX" && f[3] == "ON" {
			var n int
			err := conn.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.statistics
				WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ?`, f[4], f[2]).Scan(&n)
			if err != nil {
				return err
			}
			if n > 0 {
				continue
			}
		}
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	return nil
}
