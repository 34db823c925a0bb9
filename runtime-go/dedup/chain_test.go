package dedup_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/dedup/deduptest"
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
	deduptest.Advance(t, s)
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
	deduptest.Advance(t, s)
}
