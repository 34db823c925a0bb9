package sqlitequeue_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// FetchTx reads without leasing: rolled back, the rows are as before;
// AckTx deletes them; LeaseTx committed holds them like Fetch.
func TestFetchTx(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr, err := sqlitequeue.Open(ctx, filepath.Join(t.TempDir(), "q.db"), sqlitequeue.Config{PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	sub, err := tr.Subscribe(ctx, "g", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	tf := sub.(transport.TxFetcher)
	for range 3 {
		if err := tr.Publish(ctx, "t", &envelopepb.Envelope{BizKey: "k", EventType: "E"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tf.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	db := tf.AckDB()
	fetch := func(max int) ([]*transport.Delivery, func() error, func() error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := tf.FetchTx(ctx, tx, max)
		if err != nil {
			t.Fatal(err)
		}
		return ds, func() error {
			if len(ds) > 0 {
				if err := tf.AckTx(ctx, tx, ds[:1]...); err != nil {
					return err
				}
				if err := tf.LeaseTx(ctx, tx, ds[1:]...); err != nil {
					return err
				}
			}
			return tx.Commit()
		}, tx.Rollback
	}
	backlog := func() int {
		n, err := tr.Backlog(ctx, "g")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	ds, _, rollback := fetch(10)
	if len(ds) != 3 || ds[0].Attempt != 1 {
		t.Fatalf("FetchTx gave %d deliveries, want 3 (attempt 1)", len(ds))
	}
	if err := rollback(); err != nil {
		t.Fatal(err)
	}
	ds, commit, _ := fetch(2)
	if len(ds) != 2 {
		t.Fatalf("FetchTx after a rollback gave %d deliveries, want 2", len(ds))
	}
	if err := commit(); err != nil { // first acked, second leased
		t.Fatal(err)
	}
	if n := backlog(); n != 2 {
		t.Fatalf("backlog = %d, want 2 (one leased, one waiting)", n)
	}
	rest, commit, _ := fetch(10)
	if len(rest) != 1 || rest[0].ID == ds[1].ID {
		t.Fatalf("FetchTx gave %d deliveries, want only the unleased one", len(rest))
	}
	if err := commit(); err != nil {
		t.Fatal(err)
	}
	if err := sub.Ack(ctx, ds[1]); err != nil { // the leased one, held like a fetched one
		t.Fatal(err)
	}
	if n := backlog(); n != 0 {
		t.Fatalf("backlog = %d, want 0", n)
	}
}
