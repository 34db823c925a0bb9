package consumer_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// A handler that times out inside a shared transaction rolls back to its
// savepoint only. Message 3 fails first and rolls back to its savepoint;
// then message 5 times out in the middle of a query. On
// PostgreSQL the query is cancelled on the server (pgdb.Open), on MySQL
// killed with KILL QUERY (mysqldb.Open), so the connection and the
// transaction survive: the eight others commit in that
// transaction, nothing is handed back, and 3 and 5 are retried.
func TestBatchHandlerTimeoutKeepsTheBatch(t *testing.T) {
	t.Parallel()
	for _, be := range append([]dbBackend{sqliteBackend, postgresBackend}, mysqlBackends()...) {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, be, sqliteBroker, fastPolicy)
			f.clock = newScaledClock(10)
			for i := range 10 {
				f.publish(f.envelope(fmt.Sprintf("order:t%d", i), fmt.Sprint(i)))
			}
			f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
				env, _ := consumer.EnvelopeFrom(ctx)
				if env.GetRetryCount() == 0 {
					switch m.GetValue() {
					case "3":
						return errors.New("first attempt fails")
					case "5":
						switch f.dialect {
						case sqldb.Postgres:
							_, err := tx.ExecContext(ctx, `SELECT pg_sleep(60)`)
							return err
						case sqldb.MySQL:
							_, err := tx.ExecContext(ctx, `SELECT SLEEP(60)`)
							return err
						}
						<-ctx.Done()
						return ctx.Err()
					}
				}
				return insertEffect(ctx, tx, m.GetValue())
			}, func(c *consumer.Config) {
				c.PerMessageTx, c.FetchSize, c.Workers, c.HandlerTimeout = false, 16, 1, 300*time.Millisecond
			})
			waitFor(t, "10 processed", func() bool { return f.count(f.m.Processed) == 10 })
			f.drain()
			if got := f.effects(); got != 10 {
				t.Errorf("effects = %d, want 10", got)
			}
			f.wantCount("retried", f.m.Retried, 2)
			f.wantCount("handed back (the timeout broke the batch's transaction)", f.m.HandedBack, 0)
		})
	}
}

// Run refuses a HandlerTimeout that is not shorter than the transport's
// lease, naming both.
func TestHandlerTimeoutMustBeShorterThanLease(t *testing.T) {
	t.Parallel()
	db, _ := sqliteBackend.open(t)
	tr, err := sqlitequeue.Open(context.Background(), filepath.Join(t.TempDir(), "queue.db"), sqlitequeue.Config{Lease: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: tr, HandlerTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = consumer.Register(c, handlerName, newSpec(fastPolicy), func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(context.Context, *sql.Tx, *wrapperspb.StringValue) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	err = c.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HandlerTimeout 1s must be shorter than the transport's lease 1s") {
		t.Fatalf("Run: %v, want the lease check", err)
	}
}
