// Package pgdb opens PostgreSQL databases through pgx's database/sql
// driver. It is separate from sqldb so that a service on SQLite does not
// link pgx.
package pgdb

import (
	"database/sql"
	"fmt"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// Open opens a PostgreSQL database by its DSN (URL or key=value
// form) through pgx.
func Open(dsn string) (*sql.DB, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, err
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("pgdb: connect postgres: %w", err)
	}
	return db, nil
}
