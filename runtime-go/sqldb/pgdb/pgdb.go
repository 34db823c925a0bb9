// Package pgdb opens PostgreSQL databases through pgx's database/sql
// driver. It is separate from sqldb so that a service on SQLite does not
// link pgx.
package pgdb

import (
	"database/sql"
	"fmt"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
)

// CancelGrace is how long a connection whose query's context ended waits
// for the server to acknowledge the cancel request before it is closed.
const CancelGrace = 5 * time.Second

// Open opens a PostgreSQL database by its DSN (URL or key=value form)
// through pgx.
//
// A query whose context ends is cancelled on the server (a cancel
// request), not by closing the connection, which is pgx's default: the
// transaction survives, so a handler that timed out inside a shared
// batch transaction rolls back to its savepoint and the rest of the
// batch commits. Only when the server does not answer within CancelGrace
// is the connection closed. Open your own *sql.DB the same way (see
// pgconn.CancelRequestContextWatcherHandler) when you do not use Open.
// The pool keeps sqldb.IdleConns idle connections (see sqldb.KeepIdle).
func Open(dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgdb: parse DSN: %w", err)
	}
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: CancelGrace}
	}
	db := stdlib.OpenDB(*cfg)
	sqldb.KeepIdle(db)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("pgdb: connect postgres: %w", err)
	}
	return db, nil
}
