package dedup_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/dedup/deduptest"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
)

func newStore(t *testing.T) (*dedup.Store, *sql.DB) {
	t.Helper()
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := dedup.New(dedup.Config{DB: db, Dialect: sqldb.SQLite, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, db
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	_, err := dedup.New(dedup.Config{Table: "x; drop"})
	if err == nil {
		t.Fatal("want error")
	}
	for _, want := range []string{"DB is required", "unknown dialect", "plain SQL identifier"} {
		if !contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestClaim(t *testing.T) {
	t.Parallel()
	s, db := newStore(t)
	deduptest.Claim(t, s, db)
}

// openPG opens MSGCONTRACT_PG_DSN for the test, or skips it when unset.
func openPG(t *testing.T) *sql.DB {
	t.Helper()
	dsn := os.Getenv("MSGCONTRACT_PG_DSN")
	if dsn == "" {
		t.Skip("MSGCONTRACT_PG_DSN is unset; to run the PostgreSQL case: export MSGCONTRACT_PG_DSN=$(bash scripts/pg-start.sh)")
	}
	db, err := pgdb.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Several processes starting at once may all create the table; on
// PostgreSQL that must not fail.
func TestConcurrentMigratePostgres(t *testing.T) {
	t.Parallel()
	db := openPG(t)
	table := fmt.Sprintf("msg_dedup_mig_%d", time.Now().UnixNano())
	defer db.Exec("DROP TABLE IF EXISTS " + table)
	s, err := dedup.New(dedup.Config{DB: db, Dialect: sqldb.Postgres, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() { errs <- s.Migrate(context.Background()) }()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
