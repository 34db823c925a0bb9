// Package deduptest is the suite a dedup.Store passes on every database:
// the claim, claim-all and retry-chain rules, each a function taking a
// migrated store. dedup's own tests run it on SQLite and PostgreSQL,
// integration/runtime/dedup on MariaDB (whose driver is a module of its
// own, which runtime-go's tests must not import).
package deduptest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
)

// Claim claims one key through rollback, commit, duplicate, conflict
// and cleanup; s has a retention of an hour.
func Claim(t *testing.T, s *dedup.Store, db *sql.DB) {
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	claim := func(id, payload string, commit bool) dedup.Result {
		t.Helper()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Claim(ctx, tx, dedup.Claim{BizKey: "k", Handler: "h", MessageID: id, PayloadHash: "hash-" + payload, At: now})
		if err != nil {
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
		return r
	}
	if r := claim("m0", "p", false); !r.Claimed {
		t.Fatalf("first claim: %+v", r)
	}
	if r := claim("m1", "p", true); !r.Claimed {
		t.Fatalf("claim after rollback must succeed: %+v", r)
	}
	if r := claim("m2", "p", true); r.Claimed || r.Conflict || r.PriorMessageID != "m1" {
		t.Fatalf("duplicate: %+v", r)
	}
	if r := claim("m3", "other", true); r.Claimed || !r.Conflict || r.PriorMessageID != "m1" {
		t.Fatalf("conflict: %+v", r)
	}
	if n, err := s.Cleanup(ctx, now.Add(30*time.Minute)); err != nil || n != 0 {
		t.Fatalf("cleanup inside retention: %d %v", n, err)
	}
	if n, err := s.Cleanup(ctx, now.Add(2*time.Hour)); err != nil || n != 1 {
		t.Fatalf("cleanup after retention: %d %v", n, err)
	}
	if r := claim("m4", "p", true); !r.Claimed {
		t.Fatalf("claim after cleanup: %+v", r)
	}
}

func ClaimAll(t *testing.T, s *dedup.Store, db *sql.DB) {
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	c := func(key, id, payload string) dedup.Claim {
		return dedup.Claim{BizKey: key, Handler: "h", MessageID: id, PayloadHash: "hash-" + payload, At: now}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, tx, c("old", "m0", "p")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	claims := []dedup.Claim{c("a", "m1", "p"), c("b", "m2", "p"), c("a", "m3", "p"), c("a", "m4", "q"), c("old", "m5", "q"), c("old", "m6", "p")}
	// More claims than one statement takes.
	for i := range 450 {
		claims = append(claims, c(fmt.Sprintf("k%d", i), fmt.Sprintf("n%d", i), "p"))
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	rs, err := s.ClaimAll(ctx, tx, claims)
	if err != nil {
		t.Fatal(err)
	}
	want := []dedup.Result{
		{Claimed: true},
		{Claimed: true},
		{PriorMessageID: "m1"},
		{PriorMessageID: "m1", Conflict: true},
		{PriorMessageID: "m0", Conflict: true},
		{PriorMessageID: "m0"},
	}
	for i, w := range want {
		got := rs[i]
		if got.Claimed != w.Claimed || got.Conflict != w.Conflict || got.PriorMessageID != w.PriorMessageID {
			t.Errorf("claim %d (%s %s): got %+v, want %+v", i, claims[i].BizKey, claims[i].MessageID, got, w)
		}
	}
	for i := len(want); i < len(rs); i++ {
		if !rs[i].Claimed {
			t.Errorf("claim %d (%s): not claimed", i, claims[i].BizKey)
		}
	}
}

// Advance walks one message's chain through a fork: two copies of
// attempt 1, the redelivery of the one that went on, a late copy of an
// earlier attempt, a replay and cleanup. s has a retention of an hour.
func Advance(t *testing.T, s *dedup.Store) {
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
