package dedup_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
)

// ClaimAll gives each claim the outcome Claim would give it one by one:
// the first of a key in the batch wins, later ones of that key are
// duplicates (or conflicts) of it, and committed claims are respected.
func TestClaimAll(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s, db := newStore(t)
		testClaimAll(t, s, db)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		db := openPG(t)
		table := fmt.Sprintf("msg_dedup_all_%d", time.Now().UnixNano())
		defer db.Exec("DROP TABLE IF EXISTS " + table + ", " + table + "_conflict")
		s, err := dedup.New(dedup.Config{DB: db, Dialect: sqldb.Postgres, Table: table})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		testClaimAll(t, s, db)
	})
}

func testClaimAll(t *testing.T, s *dedup.Store, db *sql.DB) {
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
