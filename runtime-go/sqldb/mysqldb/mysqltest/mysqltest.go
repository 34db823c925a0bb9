// Package mysqltest gives each test a MySQL/MariaDB database of its own on
// the server MSGCONTRACT_MYSQL_DSN names (scripts/with-mariadb.sh sets
// it), and skips the test when it is unset.
package mysqltest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb"
)

// Env names the server: a DSN mysqldb.Open accepts, of a user that may
// create and drop databases.
const Env = "MSGCONTRACT_MYSQL_DSN"

// SkipReason is why a test skips without Env.
const SkipReason = Env + " is unset; run under scripts/with-mariadb.sh (make test-mysql) to test on MySQL/MariaDB"

// DSN creates a fresh database on the server Env names, drops it when tb
// ends, and returns a DSN (driver form) that selects it. Without Env it
// skips tb.
func DSN(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(Env)
	if base == "" {
		tb.Skip(SkipReason)
	}
	dsn, drop, err := Create(base)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = drop() })
	return dsn
}

// Create creates a database with a fresh name on the server of base (a
// DSN mysqldb.Open accepts) and returns a DSN (driver form) that selects
// it, and a function that drops it.
func Create(base string) (dsn string, drop func() error, err error) {
	cfg, err := mysqldb.ParseDSN(base)
	if err != nil {
		return "", nil, err
	}
	admin, err := mysqldb.Open(base)
	if err != nil {
		return "", nil, err
	}
	defer admin.Close()
	var n [6]byte
	_, _ = rand.Read(n[:])
	name := "t_" + hex.EncodeToString(n[:])
	if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4"); err != nil {
		return "", nil, err
	}
	drop = func() error {
		db, err := mysqldb.Open(base)
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.Exec("DROP DATABASE " + name)
		return err
	}
	cfg.DBName = name
	return cfg.FormatDSN(), drop, nil
}

// Open opens a fresh database (see DSN) through mysqldb.Open and closes it
// when tb ends.
func Open(tb testing.TB) *sql.DB {
	tb.Helper()
	db, err := mysqldb.Open(DSN(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
