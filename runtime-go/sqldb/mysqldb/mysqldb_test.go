//go:build mysql

package mysqldb_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb/mysqltest"
)

// $N statements run with their arguments in $N order, through Exec,
// Query and prepared statements; ? statements pass unchanged.
func TestRebindOnServer(t *testing.T) {
	t.Parallel()
	db := mysqltest.Open(t)
	var a, b, c string
	if err := db.QueryRow(`SELECT $2, '$1', $1`, "one", "two").Scan(&a, &b, &c); err != nil {
		t.Fatal(err)
	}
	if a != "two" || b != "$1" || c != "one" {
		t.Errorf("got %q %q %q", a, b, c)
	}
	st, err := db.Prepare(`SELECT CONCAT($1, $2, $1)`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.QueryRow("x", "y").Scan(&a); err != nil || a != "xyx" {
		t.Errorf("prepared: %q %v", a, err)
	}
	if err := db.QueryRow(`SELECT ?`, "q").Scan(&a); err != nil || a != "q" {
		t.Errorf("? statement: %q %v", a, err)
	}
}

// A statement whose context ends is killed on the server; the
// connection and its transaction go on, and the statement reports the
// context's error.
func TestTimeoutKillsTheStatementNotTheTransaction(t *testing.T) {
	t.Parallel()
	db := mysqltest.Open(t)
	ctx := context.Background()
	if _, err := db.Exec(`CREATE TABLE t (v INT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var before, after int64
	if err := tx.QueryRow(`SELECT CONNECTION_ID()`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`INSERT INTO t VALUES ($1)`, 1); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`SELECT SLEEP(30)`, `DO SLEEP(30)`} {
		tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		start := time.Now()
		_, err := tx.ExecContext(tctx, q)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: err %v, want the deadline", q, err)
		}
		if d := time.Since(start); d >= mysqldb.CancelGrace {
			t.Errorf("%s took %v: the kill did not interrupt it", q, d)
		}
	}
	if _, err := tx.Exec(`INSERT INTO t VALUES ($1)`, 2); err != nil {
		t.Fatalf("the transaction did not survive: %v", err)
	}
	if err := tx.QueryRow(`SELECT CONNECTION_ID()`).Scan(&after); err != nil || after != before {
		t.Fatalf("connection %d became %d (%v): the driver closed it", before, after, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows = %d %v, want 2", n, err)
	}
}

// A URL DSN parses like the driver's form.
func TestParseURL(t *testing.T) {
	t.Parallel()
	cfg, err := mysqldb.ParseDSN("mysql://u:p@127.0.0.1:3307/shop?parseTime=true")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.User != "u" || cfg.Passwd != "p" || cfg.Addr != "127.0.0.1:3307" || cfg.DBName != "shop" || !cfg.ParseTime || !cfg.InterpolateParams {
		t.Errorf("parsed %+v", cfg)
	}
}
