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
	pos := func(replays, attempt int, id string) dedup.ChainPos {
		return dedup.ChainPos{ReplayCount: replays, Attempt: attempt, DeliveryID: id}
	}
	for _, c := range []struct {
		name      string
		went, cur dedup.ChainPos
		want      bool
	}{
		{"the first delivery redelivered before it went on", pos(0, 0, "T/0/1"), pos(0, 0, "T/0/1"), false},
		{"a producer's duplicate of a first delivery that went on", pos(0, 0, "T/0/1"), pos(0, 0, "T/1/8"), true},
		{"the first delivery redelivered after its retry went on", pos(0, 1, "R/0/4"), pos(0, 0, "T/0/1"), true},
		{"a later attempt went on", pos(0, 3, "R/1/7"), pos(0, 2, "R/1/5"), true},
		{"this attempt went on under another copy", pos(0, 2, "R/1/5"), pos(0, 2, "R/1/6"), true},
		{"this copy went on (redelivered)", pos(0, 2, "R/1/5"), pos(0, 2, "R/1/5"), false},
		{"an earlier attempt went on", pos(0, 1, "R/0/2"), pos(0, 2, "R/1/5"), false},
		{"a replay after the chain died", pos(0, 3, "R/0/9"), pos(1, 0, "R/0/12"), false},
		{"a stale copy of the chain before the replay", pos(1, 0, "R/0/12"), pos(0, 3, "R/0/9"), true},
		{"a later attempt of the replay", pos(1, 0, "R/0/12"), pos(1, 1, "R/0/13"), false},
	} {
		if got := dedup.Superseded(c.went, c.cur); got != c.want {
			t.Errorf("%s: Superseded(%+v, %+v) = %v, want %v", c.name, c.went, c.cur, got, c.want)
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
// earlier attempt, a replay and cleanup. s has a retention of an hour.
func testAdvance(t *testing.T, s *dedup.Store) {
	ctx := context.Background()
	now := time.UnixMilli(1_900_000_000_000)
	pos := func(replays, attempt int, id string) dedup.ChainPos {
		return dedup.ChainPos{ReplayCount: replays, Attempt: attempt, DeliveryID: id}
	}
	step := func(p dedup.ChainPos, wantOK bool, want dedup.ChainPos) {
		t.Helper()
		ok, went, err := s.Advance(ctx, dedup.ChainStep{Handler: "h", MessageID: "m1", Pos: p, At: now})
		if err != nil {
			t.Fatal(err)
		}
		if ok != wantOK || went != want {
			t.Fatalf("Advance(%+v) = %v %+v, want %v %+v", p, ok, went, wantOK, want)
		}
	}
	if _, found, err := s.ChainRow(ctx, "h", "m1"); err != nil || found {
		t.Fatalf("ChainRow before any step: found %v, %v", found, err)
	}
	step(pos(0, 0, "T/0/1"), true, pos(0, 0, "T/0/1"))
	step(pos(0, 0, "T/0/1"), true, pos(0, 0, "T/0/1"))  // redelivered: the same values
	step(pos(0, 0, "T/1/3"), false, pos(0, 0, "T/0/1")) // a producer's duplicate
	step(pos(0, 1, "R/0/4"), true, pos(0, 1, "R/0/4"))
	step(pos(0, 1, "R/0/5"), false, pos(0, 1, "R/0/4")) // the fork stops
	step(pos(0, 1, "R/0/4"), true, pos(0, 1, "R/0/4"))  // the copy that went on, again
	step(pos(0, 0, "T/0/1"), false, pos(0, 1, "R/0/4")) // the first delivery, after its retry went on
	step(pos(0, 2, "R/0/9"), true, pos(0, 2, "R/0/9"))
	step(pos(0, 1, "R/0/4"), false, pos(0, 2, "R/0/9")) // overtaken
	// Another message's chain is its own.
	if ok, _, err := s.Advance(ctx, dedup.ChainStep{Handler: "h", MessageID: "m2", Pos: pos(0, 1, "R/0/5"), At: now}); err != nil || !ok {
		t.Fatalf("another message: %v %v", ok, err)
	}
	step(pos(1, 0, "R/1/2"), true, pos(1, 0, "R/1/2")) // a replay starts afresh
	step(pos(0, 3, "R/0/11"), false, pos(1, 0, "R/1/2"))
	step(pos(1, 1, "R/1/3"), true, pos(1, 1, "R/1/3"))
	if went, found, err := s.ChainRow(ctx, "h", "m1"); err != nil || !found || went != pos(1, 1, "R/1/3") {
		t.Fatalf("ChainRow = %+v %v %v", went, found, err)
	}
	if _, err := s.Cleanup(ctx, now.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, found, err := s.ChainRow(ctx, "h", "m1"); err != nil || found {
		t.Fatalf("ChainRow after cleanup: found %v, %v", found, err)
	}
}
