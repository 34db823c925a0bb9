package txcheck_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/txcheck"
)

func TestCheckAnswersFromTheTable(t *testing.T) {
	ctx := context.Background()
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := txcheck.Migrate(ctx, db, sqldb.SQLite); err != nil {
		t.Fatal(err)
	}
	stored := time.UnixMilli(1_700_000_000_000)
	// "committed" is recorded in a transaction that commits, "rolled-back"
	// in one that rolls back.
	for id, commit := range map[string]bool{"committed": true, "rolled-back": false} {
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
		{"committed", time.Second, txcheck.Commit},
		{"committed", time.Hour, txcheck.Commit},
		{"rolled-back", time.Second, txcheck.Unknown},
		{"rolled-back", window - time.Millisecond, txcheck.Unknown},
		{"rolled-back", window, txcheck.Rollback},
		{"never-recorded", 2 * window, txcheck.Rollback},
		{"", time.Second, txcheck.Rollback},
	} {
		got, err := txcheck.Check(ctx, db, c.id, stored, stored.Add(c.age), window)
		if err != nil || got != c.want {
			t.Errorf("Check(%q) at %v: %v, %v; want %v", c.id, c.age, got, err, c.want)
		}
	}
	if err := txcheck.Record(ctx, nil, "", "t", stored); err == nil {
		t.Error("Record of an empty message id: no error")
	}
	if d := txcheck.Deadline(stored, window); !d.Equal(stored.Add(30 * time.Second)) {
		t.Errorf("Deadline: %v", d)
	}

	// Prune keeps a row younger than Retention and deletes an older one.
	if n, err := txcheck.Prune(ctx, db, stored.Add(txcheck.Retention-time.Second)); err != nil || n != 0 {
		t.Errorf("Prune before Retention: %d, %v", n, err)
	}
	if n, err := txcheck.Prune(ctx, db, stored.Add(txcheck.Retention+time.Second)); err != nil || n != 1 {
		t.Errorf("Prune after Retention: %d, %v", n, err)
	}
	if got, _ := txcheck.Check(ctx, db, "committed", stored, stored.Add(time.Second), window); got != txcheck.Unknown {
		t.Errorf("after Prune: %v, want UNKNOWN", got)
	}

	// A database that fails answers Unknown with the error.
	db.Close()
	if got, err := txcheck.Check(ctx, db, "committed", stored, stored, window); err == nil || got != txcheck.Unknown {
		t.Errorf("closed database: %v, %v; want UNKNOWN and an error", got, err)
	}
}
