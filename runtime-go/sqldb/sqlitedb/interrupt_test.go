package sqlitedb

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// forever is a statement that runs until it is interrupted, and
// foreverInsert a write that does.
const (
	forever       = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c`
	foreverInsert = `INSERT INTO t (v) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c`
)

func openTest(t *testing.T) *sql.DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (v INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// Open's connections run Exec on the calling goroutine (conn); with
// another go-sqlite3 whose connection has no db field they would not.
func TestFastExecIsActive(t *testing.T) {
	db := openTest(t)
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Raw(func(dc any) error {
		if _, ok := dc.(*conn); !ok {
			return errors.New("the connection is go-sqlite3's own: its handle was not found")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A statement whose context ends is interrupted and returns the context's
// error; its transaction survives, and the next statement runs.
func TestExecInterruptedByItsContext(t *testing.T) {
	db := openTest(t)
	bg := context.Background()
	tx, err := db.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(bg, `INSERT INTO t (v) VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	if _, err := tx.ExecContext(ctx, forever); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exec of an endless statement = %v, want context.DeadlineExceeded", err)
	}
	// A statement with a live context that can end runs to its end.
	ctx2, cancel2 := context.WithTimeout(bg, time.Hour)
	defer cancel2()
	if _, err := tx.ExecContext(ctx2, `INSERT INTO t (v) VALUES (2)`); err != nil {
		t.Fatalf("insert after the interrupt: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("rows = %d (%v), want 2", n, err)
	}
	// A context already ended runs nothing.
	done, cancel3 := context.WithCancel(bg)
	cancel3()
	if _, err := db.ExecContext(done, `INSERT INTO t (v) VALUES (3)`); !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec with an ended context = %v, want context.Canceled", err)
	}
}

// An interrupt never reaches a later statement: contexts ending around
// their statement's end leave the next statement (a context that cannot
// end) untouched, and each timed statement either ran or returned its
// context's error.
func TestInterruptHitsOnlyItsStatement(t *testing.T) {
	db := openTest(t)
	bg := context.Background()
	c, err := db.Conn(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ran := 0
	for i := range 2000 {
		ctx, cancel := context.WithTimeout(bg, time.Duration(i%50)*time.Microsecond)
		_, err := c.ExecContext(ctx, `INSERT INTO t (v) VALUES (1)`)
		cancel()
		switch {
		case err == nil:
			ran++
		case !errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("timed insert %d: %v", i, err)
		}
		if _, err := c.ExecContext(bg, `INSERT INTO t (v) VALUES (2)`); err != nil {
			t.Fatalf("insert %d after a timed one: %v", i, err)
		}
	}
	var ones, twos int
	if err := c.QueryRowContext(bg, `SELECT count(*) FILTER (WHERE v = 1), count(*) FILTER (WHERE v = 2) FROM t`).
		Scan(&ones, &twos); err != nil {
		t.Fatal(err)
	}
	if ones != ran || twos != 2000 {
		t.Fatalf("rows: %d ones (want %d, the timed inserts that ran), %d twos (want 2000)", ones, ran, twos)
	}
}

// BenchmarkExec is one INSERT in a transaction with a context that cannot
// end and with one that can (a handler's), on Open's connections and on
// go-sqlite3's own (a goroutine per statement whose context can end).
func BenchmarkExec(b *testing.B) {
	background := func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }
	deadline := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), time.Hour)
	}
	open := func(path string) (*sql.DB, error) { return Open(path) }
	own := func(path string) (*sql.DB, error) { return sql.Open("sqlite3", "file:"+path+"?_txlock=immediate") }
	for _, bc := range []struct {
		name string
		open func(string) (*sql.DB, error)
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"background", open, background},
		{"deadline", open, deadline},
		{"deadline-go-sqlite3", own, deadline},
	} {
		b.Run(bc.name, func(b *testing.B) {
			db, err := bc.open(filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`CREATE TABLE t (v INTEGER NOT NULL)`); err != nil {
				b.Fatal(err)
			}
			tx, err := db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			defer tx.Rollback()
			ctx, cancel := bc.ctx()
			defer cancel()
			for b.Loop() {
				if _, err := tx.ExecContext(ctx, `INSERT INTO t (v) VALUES ($1)`, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// SQLite rolls back the whole transaction when it interrupts a write in
// it. The statements after it then fail instead of running outside any
// transaction, the commit fails, nothing of the transaction is kept, and
// the connection serves the next transaction.
func TestInterruptedWriteLosesTheTransaction(t *testing.T) {
	db := openTest(t)
	db.SetMaxOpenConns(1)
	bg := context.Background()
	tx, err := db.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(bg, `INSERT INTO t (v) VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 100*time.Millisecond)
	defer cancel()
	_, err = tx.ExecContext(ctx, foreverInsert)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrTransactionLost) {
		t.Fatalf("interrupted insert = %v, want the deadline and ErrTransactionLost", err)
	}
	if _, err := tx.ExecContext(bg, `INSERT INTO t (v) VALUES (2)`); !errors.Is(err, ErrTransactionLost) {
		t.Fatalf("insert after the lost transaction = %v, want ErrTransactionLost", err)
	}
	if err := tx.Commit(); !errors.Is(err, ErrTransactionLost) {
		t.Fatalf("commit = %v, want ErrTransactionLost", err)
	}
	if _, err := db.ExecContext(bg, `INSERT INTO t (v) VALUES (3)`); err != nil {
		t.Fatalf("the next statement on the connection: %v", err)
	}
	var vs []int
	rows, err := db.QueryContext(bg, `SELECT v FROM t ORDER BY v`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if len(vs) != 1 || vs[0] != 3 {
		t.Fatalf("rows = %v, want [3]: nothing of the lost transaction", vs)
	}
}

// Open's connections keep temporary files (a savepoint's statement
// journal) in memory.
func TestTempStoreMemory(t *testing.T) {
	db := openTest(t)
	db.SetMaxOpenConns(2)
	for range 2 { // a second connection too
		c, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var v int
		if err := c.QueryRowContext(context.Background(), `PRAGMA temp_store`).Scan(&v); err != nil || v != 2 {
			t.Fatalf("temp_store = %d (%v), want 2 (MEMORY)", v, err)
		}
	}
}
