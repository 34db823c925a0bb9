package outbox_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// Producer transaction -> outbox -> relay -> embedded queue -> consumer:
// every committed business change has exactly one effect downstream, a
// rolled-back one none, and a relay restarted mid-way (publishing some rows
// twice) changes nothing.
func TestEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	producerDB := openDB(t, sqldb.SQLite)
	if err := outbox.Migrate(ctx, producerDB, sqldb.SQLite); err != nil {
		t.Fatal(err)
	}
	consumerDB, err := sqlitedb.Open(filepath.Join(dir, "consumer.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer consumerDB.Close()
	if _, err := consumerDB.Exec(`CREATE TABLE effects (biz_key TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	queue, err := sqlitequeue.Open(ctx, filepath.Join(dir, "queue.db"), sqlitequeue.Config{PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer queue.Close()

	spec := &event.Spec{Topic: "orders", EventType: "PAID", Policy: backoff.Default}
	for i := range 50 {
		tx, err := producerDB.Begin()
		if err != nil {
			t.Fatal(err)
		}
		env, _ := event.NewEnvelope(spec, wrapperspb.String("x"), fmt.Sprintf("order:%d", i), event.Options{})
		if err := outbox.Write(ctx, tx, env); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			err = tx.Rollback() // the business change failed: no message
		} else {
			err = tx.Commit()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// A relay that publishes and then dies before marking rows sent: the
	// next one publishes them again.
	rows, err := producerDB.Query(`SELECT envelope FROM msg_outbox ORDER BY id LIMIT 10`)
	if err != nil {
		t.Fatal(err)
	}
	var early [][]byte
	for rows.Next() {
		var b []byte
		_ = rows.Scan(&b)
		early = append(early, b)
	}
	rows.Close()
	for _, b := range early {
		if err := queue.PublishRaw(ctx, "orders", b); err != nil {
			t.Fatal(err)
		}
	}
	relay, err := outbox.NewRelay(outbox.RelayConfig{DB: producerDB, Dialect: sqldb.SQLite, Publisher: queue,
		PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c, err := consumer.New(consumer.Config{DB: consumerDB, Dialect: sqldb.SQLite, Subscriber: queue})
	if err != nil {
		t.Fatal(err)
	}
	err = consumer.Register(c, "h", spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, _ *wrapperspb.StringValue) error {
			env, _ := consumer.EnvelopeFrom(ctx)
			_, err := tx.ExecContext(ctx, `INSERT INTO effects VALUES ($1)`, env.GetBizKey())
			return err
		})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() { _ = relay.Run(runCtx); done <- struct{}{} }()
	go func() { _ = c.Run(runCtx); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()

	deadline := time.Now().Add(60 * time.Second)
	for {
		pending, _ := outbox.Pending(ctx, producerDB)
		queued, _ := queue.Backlog(ctx, "")
		if pending == 0 && queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %d outbox rows pending, %d queued", pending, queued)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var effects, distinct int
	if err := consumerDB.QueryRow(`SELECT count(*), count(DISTINCT biz_key) FROM effects`).Scan(&effects, &distinct); err != nil {
		t.Fatal(err)
	}
	if effects != 45 || distinct != 45 {
		t.Errorf("effects = %d (%d distinct), want 45: 50 writes, 5 rolled back", effects, distinct)
	}
}
