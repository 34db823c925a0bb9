//go:build mysql

package cli

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb/mysqltest"
)

// dedup conflicts lists a conflict recorded in a MySQL/MariaDB database
// given as a mysql:// URL (make test-mysql).
func TestDedupConflictsMySQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := mysqldb.ParseDSN(mysqltest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	db, err := mysqldb.Open(cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store, err := dedup.New(dedup.Config{DB: db, Dialect: sqldb.MySQL})
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
	// The URL form of the test's database.
	base := os.Getenv(mysqltest.Env)
	i := strings.LastIndex(base, "/")
	url := base[:i+1] + cfg.DBName
	code, out, errOut := run(t, "dedup", "conflicts", "--db", url, "--handler", "record-payment")
	if code != ExitOK || !strings.Contains(out, "order:1:PAID") || !strings.Contains(out, "1 conflict\n") {
		t.Fatalf("conflicts: exit %d\n%s%s", code, out, errOut)
	}
}
