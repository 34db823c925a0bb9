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

// ClaimAll gives each claim the outcome Claim would give it one by one:
// the first of a key in the batch wins, later ones of that key are
// duplicates (or conflicts) of it, and committed claims are respected.
func TestClaimAll(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		s, db := newStore(t)
		deduptest.ClaimAll(t, s, db)
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
		deduptest.ClaimAll(t, s, db)
	})
}
