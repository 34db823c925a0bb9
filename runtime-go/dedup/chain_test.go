package dedup_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
)

// The rule every runtime decides by (docs/DESIGN.md, "One retry chain per
// message").
func TestSuperseded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		row        dedup.ChainRow
		attempt    int
		deliveryID string
		want       bool
	}{
		{"a first delivery never is", dedup.ChainRow{Attempt: 3, DeliveryID: "T/0/9"}, 0, "T/0/1", false},
		{"a first delivery redelivered", dedup.ChainRow{Attempt: 0, DeliveryID: "T/0/1"}, 0, "T/0/1", false},
		{"a later attempt went on", dedup.ChainRow{Attempt: 3, DeliveryID: "R/1/7"}, 2, "R/1/5", true},
		{"this attempt went on under another copy", dedup.ChainRow{Attempt: 2, DeliveryID: "R/1/5"}, 2, "R/1/6", true},
		{"this copy went on (redelivered)", dedup.ChainRow{Attempt: 2, DeliveryID: "R/1/5"}, 2, "R/1/5", false},
		{"an earlier attempt went on", dedup.ChainRow{Attempt: 1, DeliveryID: "R/0/2"}, 2, "R/1/5", false},
	} {
		if got := dedup.Superseded(c.row, c.attempt, c.deliveryID); got != c.want {
			t.Errorf("%s: Superseded(%+v, %d, %q) = %v, want %v", c.name, c.row, c.attempt, c.deliveryID, got, c.want)
		}
	}
}

func TestAdvance(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	testAdvance(t, s)
}

func TestAdvancePostgres(t *testing.T) {
	t.Parallel()
	db := openPG(t)
	table := fmt.Sprintf("msg_dedup_chain_%d", time.Now().UnixNano())
	s, err := dedup.New(dedup.Config{DB: db, Dialect: sqldb.Postgres, Table: table, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, t := range []string{table, table + "_conflict", table + "_chain"} {
			_, _ = db.Exec("DROP TABLE IF EXISTS " + t)
		}
	})
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	testAdvance(t, s)
}

// testAdvance walks one message's chain through a fork: two copies of
// attempt 1, the redelivery of the one that went on, a late copy of an
// earlier attempt, a replay (attempt 0) and cleanup. s has a retention of
// an hour.
func testAdvance(t *testing.T, s *dedup.Store) {
	ctx := context.Background()
	now := time.UnixMilli(1_900_000_000_000)
	step := func(attempt int, id string, wantOK bool, wantRow dedup.ChainRow) {
		t.Helper()
		ok, row, err := s.Advance(ctx, dedup.ChainStep{Handler: "h", MessageID: "m1", Attempt: attempt, DeliveryID: id, At: now})
		if err != nil {
			t.Fatal(err)
		}
		if ok != wantOK || row != wantRow {
			t.Fatalf("Advance(%d, %s) = %v %+v, want %v %+v", attempt, id, ok, row, wantOK, wantRow)
		}
	}
	if _, found, err := s.ChainRow(ctx, "h", "m1"); err != nil || found {
		t.Fatalf("ChainRow before any step: found %v, %v", found, err)
	}
	step(0, "T/0/1", true, dedup.ChainRow{Attempt: 0, DeliveryID: "T/0/1"})
	step(0, "T/0/1", true, dedup.ChainRow{Attempt: 0, DeliveryID: "T/0/1"}) // redelivered: same values
	step(1, "R/0/4", true, dedup.ChainRow{Attempt: 1, DeliveryID: "R/0/4"})
	step(1, "R/0/5", false, dedup.ChainRow{Attempt: 1, DeliveryID: "R/0/4"}) // the fork stops
	step(1, "R/0/4", true, dedup.ChainRow{Attempt: 1, DeliveryID: "R/0/4"})  // the copy that went on, again
	step(2, "R/0/9", true, dedup.ChainRow{Attempt: 2, DeliveryID: "R/0/9"})
	step(1, "R/0/4", false, dedup.ChainRow{Attempt: 2, DeliveryID: "R/0/9"}) // overtaken
	// Another message's chain is its own.
	if ok, _, err := s.Advance(ctx, dedup.ChainStep{Handler: "h", MessageID: "m2", Attempt: 1, DeliveryID: "R/0/5", At: now}); err != nil || !ok {
		t.Fatalf("another message: %v %v", ok, err)
	}
	step(0, "R/1/2", true, dedup.ChainRow{Attempt: 0, DeliveryID: "R/1/2"}) // a replay starts afresh
	step(1, "R/1/3", true, dedup.ChainRow{Attempt: 1, DeliveryID: "R/1/3"})
	if row, found, err := s.ChainRow(ctx, "h", "m1"); err != nil || !found || row != (dedup.ChainRow{Attempt: 1, DeliveryID: "R/1/3"}) {
		t.Fatalf("ChainRow = %+v %v %v", row, found, err)
	}
	if _, err := s.Cleanup(ctx, now.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, found, err := s.ChainRow(ctx, "h", "m1"); err != nil || found {
		t.Fatalf("ChainRow after cleanup: found %v, %v", found, err)
	}
}
