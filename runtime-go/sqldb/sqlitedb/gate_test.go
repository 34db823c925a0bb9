package sqlitedb_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
)

// A second writer of the same DB waits at the gate, not in SQLite's busy
// handler: its context ending there is the error it gets, and it starts
// once the first transaction ends.
func TestWritersTakeTurnsAtTheGate(t *testing.T) {
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "gate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (v INTEGER)`); err != nil {
		t.Fatal(err)
	}
	first, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Exec(`INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func(ctx context.Context) error{
		"transaction": func(ctx context.Context) error { _, err := db.BeginTx(ctx, nil); return err },
		"statement":   func(ctx context.Context) error { _, err := db.ExecContext(ctx, `INSERT INTO t VALUES (2)`); return err },
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := write(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s while another transaction writes: %v, want the context's deadline from the gate", name, err)
		}
	}
	done := make(chan error, 1)
	go func() { _, err := db.Exec(`INSERT INTO t VALUES (3)`); done <- err }()
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the waiting writer after the commit: %v", err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows = %d (%v), want 2", n, err)
	}
}
