// Command payments consumes PaySuccess events from the embedded SQLite queue
// with the code msgcontract generated into gen/: the same payment published
// twice is recorded once.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"

	paymentv1 "example.com/payments/gen/shop/payment/v1"
)

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "payments")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := sqlitedb.Open(filepath.Join(dir, "business.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE payments (order_id TEXT PRIMARY KEY, amount INTEGER)`); err != nil {
		return err
	}
	queue, err := sqlitequeue.Open(ctx, filepath.Join(dir, "queue.db"), sqlitequeue.Config{})
	if err != nil {
		return err
	}
	defer queue.Close()

	// The consumer: one handler per event, the business write in the dedup transaction.
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: queue, Group: "payments"})
	if err != nil {
		return err
	}
	err = paymentv1.RegisterPaySuccessHandler(c, "record-payment",
		func(ctx context.Context, tx *sql.Tx, m *paymentv1.PaySuccess) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO payments VALUES (?, ?)`, m.GetOrderId(), m.GetAmount())
			return err
		})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	// A producer that retries: the same payment is published twice.
	paid := &paymentv1.PaySuccess{OrderId: "20250101_0001", Amount: 1999}
	for range 2 {
		if err := paymentv1.PublishPaySuccess(ctx, queue, paid, event.Options{}); err != nil {
			return err
		}
	}
	for n := 1; n > 0; {
		time.Sleep(20 * time.Millisecond)
		if n, err = queue.Backlog(ctx, ""); err != nil {
			return err
		}
	}
	cancel()
	if err := <-done; err != nil && ctx.Err() == nil {
		return err
	}
	var count int
	if err := db.QueryRow(`SELECT count(*) FROM payments`).Scan(&count); err != nil {
		return err
	}
	fmt.Printf("payments recorded: %d (published twice)\n", count)
	if count != 1 {
		return fmt.Errorf("want 1 payment, got %d", count)
	}
	return nil
}
