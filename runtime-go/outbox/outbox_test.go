package outbox_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

var spec = &event.Spec{Topic: "orders", EventType: "PAID"}

// flaky wraps a real transport and fails publishes of one key while
// failKey is set.
type flaky struct {
	transport.Publisher
	mu      sync.Mutex
	failKey string
	order   []string
}

func (f *flaky) Publish(ctx context.Context, topic string, env *envelopepb.Envelope) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if env.GetBizKey() == f.failKey {
		return errors.New("broker unavailable")
	}
	f.order = append(f.order, env.GetBizKey()+"/"+env.GetMessageId())
	return f.Publisher.Publish(ctx, topic, env)
}

func TestOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqldb.OpenSQLite(filepath.Join(dir, "business.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := outbox.Migrate(ctx, db, sqldb.SQLite); err != nil {
		t.Fatal(err)
	}
	tr, err := sqlitequeue.Open(ctx, filepath.Join(dir, "queue.db"), sqlitequeue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()

	write := func(commit bool, keys ...string) {
		t.Helper()
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			env, err := event.NewEnvelope(spec, wrapperspb.String(k), k, event.Options{MessageID: k + "#" + string(rune('0'+i))})
			if err != nil {
				t.Fatal(err)
			}
			if err := outbox.Write(ctx, tx, env); err != nil {
				t.Fatal(err)
			}
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
	write(true, "a", "b", "a")
	write(false, "rolled-back")
	write(true, "c")

	pub := &flaky{Publisher: tr, failKey: "a"}
	relay, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: sqldb.SQLite, Publisher: pub})
	if err != nil {
		t.Fatal(err)
	}
	n, err := relay.Flush(ctx)
	if n != 2 || err == nil {
		t.Fatalf("first pass: sent %d err %v; want 2 and the failure of key a", n, err)
	}
	// The broker is back: the held-back rows of key a go out, in order.
	pub.mu.Lock()
	pub.failKey = ""
	pub.mu.Unlock()
	if n, err := relay.Flush(ctx); n != 2 || err != nil {
		t.Fatalf("second pass: sent %d err %v", n, err)
	}
	want := []string{"b/b#1", "c/c#0", "a/a#0", "a/a#2"}
	if len(pub.order) != len(want) {
		t.Fatalf("published %v, want %v", pub.order, want)
	}
	for i := range want {
		if pub.order[i] != want[i] {
			t.Fatalf("published %v, want %v (per-key order)", pub.order, want)
		}
	}
	if p, _ := outbox.Pending(ctx, db); p != 0 {
		t.Errorf("pending = %d", p)
	}
	if q, _ := tr.Pending(ctx); q != 4 {
		t.Errorf("queued = %d, want 4", q)
	}

	// A second relay does not publish while the first holds the lock.
	write(true, "d")
	other, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: sqldb.SQLite, Publisher: tr})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := other.Flush(ctx); n != 0 || err != nil {
		t.Fatalf("second relay published %d (%v) while the first holds the lock", n, err)
	}
	// After a restart (a new relay once the lease expired) the row goes out.
	restarted, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: sqldb.SQLite, Publisher: tr, Lease: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE msg_outbox_lock SET lease_until = 0`); err != nil { // the old relay died
		t.Fatal(err)
	}
	if n, err := restarted.Flush(ctx); n != 1 || err != nil {
		t.Fatalf("restarted relay: sent %d err %v", n, err)
	}
}

func TestWriteNeedsTopic(t *testing.T) {
	t.Parallel()
	if err := outbox.Write(context.Background(), nil, &envelopepb.Envelope{MessageId: "x"}); err == nil {
		t.Fatal("want an error for an envelope without topic")
	}
}
