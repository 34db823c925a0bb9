package txcheck_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/txcheck/txchecktest"
)

func TestCheckOnSQLite(t *testing.T) {
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	txchecktest.AnswersFromTheTable(t, db, sqldb.SQLite)
}

// TestCheckOnPostgres runs on the server MSGCONTRACT_PG_DSN names
// (make test-runtime starts one), whose database other runs share: the
// message ids are fresh each run.
func TestCheckOnPostgres(t *testing.T) {
	dsn := os.Getenv("MSGCONTRACT_PG_DSN")
	if dsn == "" {
		t.Skip("MSGCONTRACT_PG_DSN is unset; to run the PostgreSQL case: export MSGCONTRACT_PG_DSN=$(bash scripts/pg-start.sh)")
	}
	db, err := pgdb.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	txchecktest.AnswersFromTheTable(t, db, sqldb.Postgres)
}
