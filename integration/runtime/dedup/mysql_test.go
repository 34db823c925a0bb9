//go:build mysql

package dedup_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/dedup/deduptest"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb/mysqltest"
)

// newMySQLStore migrates a store (retention one hour) in a database of
// the test's own on MSGCONTRACT_MYSQL_DSN's server.
func newMySQLStore(t *testing.T) (*dedup.Store, *sql.DB) {
	t.Helper()
	db := mysqltest.Open(t)
	s, err := dedup.New(dedup.Config{DB: db, Dialect: sqldb.MySQL, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, db
}

func TestMySQLClaim(t *testing.T) {
	t.Parallel()
	s, db := newMySQLStore(t)
	deduptest.Claim(t, s, db)
}

// ClaimAll on MySQL: the mixed batch takes the one-by-one path, a batch
// of new keys the single statement.
func TestMySQLClaimAll(t *testing.T) {
	t.Parallel()
	s, db := newMySQLStore(t)
	deduptest.ClaimAll(t, s, db)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var cs []dedup.Claim
	for _, k := range []string{"n1", "n2", "n3"} {
		cs = append(cs, dedup.Claim{BizKey: k, Handler: "h", MessageID: "m-" + k, PayloadHash: "p", At: time.Now()})
	}
	rs, err := s.ClaimAll(ctx, tx, cs)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if !r.Claimed {
			t.Errorf("claim %d: %+v", i, r)
		}
	}
}

// Keys are bytes: case and trailing spaces make different keys, as on
// SQLite and PostgreSQL, and a biz_key longer than the column is an
// error, not a truncated claim.
func TestMySQLKeysAreBytes(t *testing.T) {
	t.Parallel()
	s, db := newMySQLStore(t)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, k := range []string{"order:a", "order:A", "order:a ", "order:ä"} {
		r, err := s.Claim(ctx, tx, dedup.Claim{BizKey: k, Handler: "h", MessageID: "m", PayloadHash: "p", At: time.Now()})
		if err != nil || !r.Claimed {
			t.Errorf("claim %q: %+v %v, want a claim of its own", k, r, err)
		}
	}
	long := strings.Repeat("k", dedup.MaxBizKeyBytes+1)
	if _, err := s.Claim(ctx, tx, dedup.Claim{BizKey: long, Handler: "h", MessageID: "m", PayloadHash: "p", At: time.Now()}); err == nil {
		t.Errorf("a %d-byte biz_key was claimed; want an error", len(long))
	}
}

// Conflicts are recorded once per losing message and listed with filters.
func TestMySQLConflicts(t *testing.T) {
	t.Parallel()
	s, db := newMySQLStore(t)
	ctx := context.Background()
	at := time.UnixMilli(1_700_000_000_000)
	for range 2 {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = s.RecordConflict(ctx, tx, dedup.Conflict{BizKey: "k", Handler: "h", MessageID: "m2", PayloadHash: "p2",
			PriorMessageID: "m1", PriorPayloadHash: "p1", PriorClaimedAt: at, SeenAt: at.Add(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := s.Conflicts(ctx, dedup.ConflictFilter{Handler: "h", BizKey: "k", Since: at})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].MessageID != "m2" || cs[0].PriorMessageID != "m1" || !cs[0].SeenAt.Equal(at.Add(time.Second)) {
		t.Fatalf("conflicts = %+v, want the one record", cs)
	}
	if cs, err := s.Conflicts(ctx, dedup.ConflictFilter{Handler: "other"}); err != nil || len(cs) != 0 {
		t.Fatalf("filtered conflicts = %+v %v", cs, err)
	}
}

// Several processes starting at once may all migrate.
func TestMySQLConcurrentMigrate(t *testing.T) {
	t.Parallel()
	db := mysqltest.Open(t)
	s, err := dedup.New(dedup.Config{DB: db, Dialect: sqldb.MySQL})
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() { errs <- s.Migrate(context.Background()) }()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// Advance on MySQL, which counts changed rows only: a step that repeats
// the row changes nothing and must still go on.
func TestMySQLAdvance(t *testing.T) {
	t.Parallel()
	s, _ := newMySQLStore(t)
	deduptest.Advance(t, s)
}

// Delivery ids are compared as bytes: Kafka topics "T" and "t" differ.
func TestMySQLChainDeliveryIDsAreBytes(t *testing.T) {
	t.Parallel()
	s, _ := newMySQLStore(t)
	ctx := context.Background()
	at := time.UnixMilli(1_900_000_000_000)
	first := dedup.ChainStep{Handler: "h", MessageID: "m", Pos: dedup.ChainPos{Attempt: 1, DeliveryID: "T.retry/0/4"}, At: at}
	if ok, _, err := s.Advance(ctx, first); err != nil || !ok {
		t.Fatalf("first copy: %v %v", ok, err)
	}
	other := first
	other.Pos.DeliveryID = "t.retry/0/4"
	if ok, went, err := s.Advance(ctx, other); err != nil || ok {
		t.Fatalf("a copy whose id differs in case only went on too (%v, row %+v, %v)", ok, went, err)
	}
}
