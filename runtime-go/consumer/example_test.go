package consumer_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// A consumer on the embedded SQLite transport: a duplicate delivery of the
// same business key has no second effect.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	db, _ := sqlitedb.Open(filepath.Join(dir, "business.db"))
	defer db.Close()
	_, _ = db.Exec(`CREATE TABLE payments (order_id TEXT NOT NULL)`)
	queue, _ := sqlitequeue.Open(ctx, filepath.Join(dir, "queue.db"), sqlitequeue.Config{})
	defer queue.Close()
	m, _ := metrics.New(prometheus.NewRegistry())

	// Generated code declares the spec; here it is written by hand.
	spec := &event.Spec{FullName: "google.protobuf.StringValue", Topic: "order-event", EventType: "PAY_SUCCESS",
		Policy: backoff.Default}
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: queue, Group: "payments",
		Metrics: m, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	err = consumer.Register(c, "record-payment", spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, order *wrapperspb.StringValue) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO payments (order_id) VALUES ($1)`, order.GetValue())
			return err
		})
	if err != nil {
		panic(err)
	}
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()

	env, _ := event.NewEnvelope(spec, wrapperspb.String("20250101_0001"), "order_id:20250101_0001:PAY_SUCCESS", event.Options{})
	_ = queue.Publish(ctx, spec.Topic, env)
	_ = queue.Publish(ctx, spec.Topic, env) // the broker delivers it twice
	for {
		if n, _ := queue.Backlog(ctx, ""); n == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done

	var payments int
	_ = db.QueryRow(`SELECT count(*) FROM payments`).Scan(&payments)
	fmt.Println("payments:", payments)
	// Output: payments: 1
}
