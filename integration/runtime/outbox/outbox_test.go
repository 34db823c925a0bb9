package outbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb/mysqltest"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
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

// openDB returns a fresh business database of the dialect; PostgreSQL
// gets a schema of its own in MSGCONTRACT_PG_DSN's database, MySQL a
// database of its own (mysqltest).
func openDB(t *testing.T, d sqldb.Dialect) *sql.DB {
	t.Helper()
	if d == sqldb.SQLite {
		db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "business.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	if d == sqldb.MySQL {
		return mysqltest.Open(t)
	}
	dsn := os.Getenv("MSGCONTRACT_PG_DSN")
	if dsn == "" {
		t.Skip("MSGCONTRACT_PG_DSN is unset; to run the PostgreSQL case: export MSGCONTRACT_PG_DSN=$(bash scripts/pg-start.sh)")
	}
	admin, err := pgdb.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("outbox_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	db, err := pgdb.Open(schemaDSN(t, schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	return db
}

// flakyBatch is flaky with PublishBatch: the relay hands it runs of rows,
// and a run holding failKey fails whole, as Kafka fails a key's partition.
type flakyBatch struct{ *flaky }

func (f flakyBatch) PublishBatch(ctx context.Context, topic string, envs []*envelopepb.Envelope) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, env := range envs {
		if env.GetBizKey() == f.failKey {
			return errors.New("broker unavailable")
		}
	}
	for _, env := range envs {
		f.order = append(f.order, env.GetBizKey()+"/"+env.GetMessageId())
	}
	return f.Publisher.(*sqlitequeue.Transport).PublishBatch(ctx, topic, envs)
}

func TestOutbox(t *testing.T) {
	t.Parallel()
	for _, d := range []sqldb.Dialect{sqldb.SQLite, sqldb.Postgres} {
		for _, batch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/batch=%v", d, batch), func(t *testing.T) {
				t.Parallel()
				testOutbox(t, d, batch)
			})
		}
	}
}

func testOutbox(t *testing.T, dialect sqldb.Dialect, batch bool) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openDB(t, dialect)
	if err := outbox.Migrate(ctx, db, dialect); err != nil {
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
	var publisher transport.Publisher = pub
	if batch {
		publisher = flakyBatch{pub}
	}
	relay, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: dialect, Publisher: publisher})
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
	if q, _ := tr.Backlog(ctx, ""); q != 4 {
		t.Errorf("queued = %d, want 4", q)
	}

	// A second relay does not publish while the first holds the lock.
	write(true, "d")
	other, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: dialect, Publisher: tr})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := other.Flush(ctx); n != 0 || err != nil {
		t.Fatalf("second relay published %d (%v) while the first holds the lock", n, err)
	}
	// After a restart (a new relay once the lease expired) the row goes out.
	restarted, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: dialect, Publisher: tr, Lease: 1})
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

func TestPublisher(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t, sqldb.SQLite)
	if err := outbox.Migrate(ctx, db, sqldb.SQLite); err != nil {
		t.Fatal(err)
	}
	var p outbox.Publisher
	env, _ := event.NewEnvelope(spec, wrapperspb.String("x"), "k", event.Options{})
	if err := p.Publish(ctx, "orders", env); !errors.Is(err, outbox.ErrNoTx) {
		t.Fatalf("publish without a transaction: %v, want ErrNoTx", err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(outbox.WithTx(ctx, tx), "orders", env); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if tx, err = db.Begin(); err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(outbox.WithTx(ctx, tx), "other-topic", env); err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback() // the business transaction fails: its message goes too
	if n, _ := outbox.Pending(ctx, db); n != 1 {
		t.Fatalf("pending = %d, want 1", n)
	}
}

// schemaDSN is MSGCONTRACT_PG_DSN with schema as its search_path.
func schemaDSN(t *testing.T, schema string) string {
	t.Helper()
	u, err := url.Parse(os.Getenv("MSGCONTRACT_PG_DSN"))
	if err != nil {
		t.Fatalf("MSGCONTRACT_PG_DSN must be a postgres:// URL here: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
