package ops

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
)

func TestDedupConflicts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "business.db")
	db, err := sqlitedb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	recordConflict(t, db, sqldb.SQLite)
	db.Close()

	code, out, errOut := run(t, "dedup", "conflicts", "--db", path)
	if code != cli.ExitOK || !strings.Contains(out, "order:1:PAID") || !strings.Contains(out, "m1") || !strings.Contains(out, "1 conflict\n") {
		t.Fatalf("conflicts: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, "dedup", "conflicts", "--db", "sqlite:"+path, "--handler", "other")
	if code != cli.ExitOK || !strings.Contains(out, "0 conflicts") {
		t.Fatalf("filtered: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "dedup", "conflicts", "--db", path, "--json")
	if code != cli.ExitOK || !strings.Contains(out, `"prior_payload_hash": "aaaa"`) {
		t.Fatalf("json: exit %d\n%s", code, out)
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	if code, _, errOut = run(t, "dedup", "conflicts", "--db", missing); code != cli.ExitUsage || !strings.Contains(errOut, "missing.db") {
		t.Fatalf("missing db: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("a missing --db was created: %v", err)
	}
}

// recordConflict migrates the dedup tables in db and records one conflict
// of handler record-payment under order:1:PAID (winner m1, loser m2).
func recordConflict(t *testing.T, db *sql.DB, d sqldb.Dialect) {
	t.Helper()
	ctx := context.Background()
	store, err := dedup.New(dedup.Config{DB: db, Dialect: d})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := store.RecordConflict(ctx, tx, dedup.Conflict{BizKey: "order:1:PAID", Handler: "record-payment",
		MessageID: "m2", PayloadHash: "bbbb", PriorMessageID: "m1", PriorPayloadHash: "aaaa", PriorClaimedAt: at, SeenAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
