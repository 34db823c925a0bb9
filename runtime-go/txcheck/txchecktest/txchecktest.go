// Package txchecktest is the suite the check-back table passes on every
// database. txcheck's own tests run it on SQLite and PostgreSQL,
// integration/runtime/txcheck on MariaDB (whose driver is a module of its
// own, which runtime-go's tests must not import).
package txchecktest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/txcheck"
)

// AnswersFromTheTable migrates db (closed at the end), records one half
// message in a transaction that commits and one in a transaction that
// rolls back, and checks Check's answers, Deadline and Prune. Message ids
// are fresh each run, for a server other runs share.
func AnswersFromTheTable(t *testing.T, db *sql.DB, d sqldb.Dialect) {
	ctx := context.Background()
	defer db.Close()
	if err := txcheck.Migrate(ctx, db, d); err != nil {
		t.Fatal(err)
	}
	if err := txcheck.Migrate(ctx, db, d); err != nil {
		t.Fatalf("a second Migrate: %v", err)
	}
	stored := time.UnixMilli(1_700_000_000_000)
	committed, rolledBack := "committed-"+event.NewMessageID(), "rolled-back-"+event.NewMessageID()
	for id, commit := range map[string]bool{committed: true, rolledBack: false} {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := txcheck.Record(ctx, tx, id, "payment-callback", stored); err != nil {
			t.Fatal(err)
		}
		if commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	window := time.Minute
	for _, c := range []struct {
		id   string
		age  time.Duration
		want txcheck.Answer
	}{
		{committed, time.Second, txcheck.Commit},
		{committed, time.Hour, txcheck.Commit},
		{rolledBack, time.Second, txcheck.Unknown},
		{rolledBack, window - time.Millisecond, txcheck.Unknown},
		{rolledBack, window, txcheck.Rollback},
		{"never-recorded-" + event.NewMessageID(), 2 * window, txcheck.Rollback},
		{"", time.Second, txcheck.Rollback},
	} {
		got, err := txcheck.Check(ctx, db, c.id, stored, stored.Add(c.age), window)
		if err != nil || got != c.want {
			t.Errorf("%v: Check(%q) at %v: %v, %v; want %v", d, c.id, c.age, got, err, c.want)
		}
	}
	if err := txcheck.Record(ctx, nil, "", "t", stored); err == nil {
		t.Error("Record of an empty message id: no error")
	}
	if dl := txcheck.Deadline(stored, window); !dl.Equal(stored.Add(30 * time.Second)) {
		t.Errorf("Deadline: %v", dl)
	}
	// An odd window: whole milliseconds, rounded down, as in Java and Python.
	if dl := txcheck.Deadline(stored, 4003*time.Millisecond); !dl.Equal(stored.Add(2001 * time.Millisecond)) {
		t.Errorf("Deadline of a 4003 ms window: %v after stored, want 2.001s", dl.Sub(stored))
	}

	// Prune keeps a row younger than Retention and deletes an older one
	// (other runs' rows on a shared server go too).
	if _, err := txcheck.Prune(ctx, db, stored.Add(txcheck.Retention-time.Second)); err != nil {
		t.Fatal(err)
	}
	if got, _ := txcheck.Check(ctx, db, committed, stored, stored.Add(time.Second), window); got != txcheck.Commit {
		t.Errorf("%v: Prune before Retention deleted the row: %v", d, got)
	}
	if n, err := txcheck.Prune(ctx, db, stored.Add(txcheck.Retention+time.Second)); err != nil || n < 1 {
		t.Errorf("%v: Prune after Retention: %d, %v", d, n, err)
	}
	if got, _ := txcheck.Check(ctx, db, committed, stored, stored.Add(time.Second), window); got != txcheck.Unknown {
		t.Errorf("%v: after Prune: %v, want UNKNOWN", d, got)
	}

	// A database that fails answers Unknown with the error.
	db.Close()
	if got, err := txcheck.Check(ctx, db, committed, stored, stored, window); err == nil || got != txcheck.Unknown {
		t.Errorf("%v: closed database: %v, %v; want UNKNOWN and an error", d, got, err)
	}
}
