package outbox_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// A relay whose poll interval is an hour still publishes a committed row
// at once when it is woken: by Notify from the producer's process, and on
// PostgreSQL by a Notifier's NOTIFY from another connection pool, as from
// another process. Without the wake-up nothing is published within the
// test's minute.
func TestRelayWakes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		dialect sqldb.Dialect
		notify  bool // the producer calls Relay.Notify after its commit, else a Notifier's
	}{
		{"sqlite/notify", sqldb.SQLite, true},
		{"postgres/notify", sqldb.Postgres, true},
		{"postgres/listen", sqldb.Postgres, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			db := openDB(t, c.dialect)
			if err := outbox.Migrate(ctx, db, c.dialect); err != nil {
				t.Fatal(err)
			}
			writer := db
			var notifier *outbox.Notifier
			if !c.notify {
				writer = reopen(t, db)
				notifier = outbox.NewNotifier(writer, nil)
			}
			tr, err := sqlitequeue.Open(ctx, filepath.Join(t.TempDir(), "queue.db"), sqlitequeue.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			relay, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: c.dialect, Publisher: tr, PollInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- relay.Run(ctx) }()
			// The first pass finds nothing; from then on the relay waits
			// out its hour unless woken.
			waitFor(t, func() bool { n, _ := outbox.Pending(ctx, db); return n == 0 })
			time.Sleep(200 * time.Millisecond)
			for i, key := range []string{"k1", "k2", "k3"} {
				tx, err := writer.Begin()
				if err != nil {
					t.Fatal(err)
				}
				env, err := event.NewEnvelope(spec, wrapperspb.String(key), key, event.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if err := outbox.Write(ctx, tx, env); err != nil {
					t.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
				if c.notify {
					relay.Notify()
				} else {
					notifier.Notify()
				}
				t0 := time.Now()
				waitFor(t, func() bool { n, _ := tr.Backlog(ctx, ""); return n == i+1 })
				t.Logf("woken after %v", time.Since(t0))
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// waitFor polls cond for up to a minute, far inside the relay's hour.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("not woken: the relay waited out its poll interval")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// reopen opens a second pool on db's PostgreSQL schema.
func reopen(t *testing.T, db *sql.DB) *sql.DB {
	t.Helper()
	var schema string
	if err := db.QueryRow(`SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	other, err := pgdb.Open(schemaDSN(t, schema))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return other
}
