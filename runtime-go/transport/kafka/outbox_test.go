//go:build kafka

package kafka_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
)

// The outbox relay publishes through the Kafka transport: rows written in
// business transactions arrive keyed by biz_key, one key's in order.
func TestOutboxRelayPublishes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "biz.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := outbox.Migrate(ctx, db, sqldb.SQLite); err != nil {
		t.Fatal(err)
	}
	tr := newTransport(t, func(c *kafka.Config) { c.Partitions = 3 })
	s := sub(t, tr, "g")
	for i := range 3 {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		env := &envelopepb.Envelope{MessageId: fmt.Sprint("m", i), BizKey: "order:1", EventType: "E", Topic: "sem",
			Payload: []byte{byte(i)}}
		if err := outbox.Write(ctx, tx, env); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	relay, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: sqldb.SQLite, Publisher: tr})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := relay.Flush(ctx); err != nil || n != 3 {
		t.Fatalf("flush: %d %v", n, err)
	}
	for i := range 3 {
		d := take(t, s, 1)[0]
		if key(t, d) != "order:1" || d.Body == nil || d.Offset != int64(i) {
			t.Fatalf("delivery %d: key %s offset %d", i, key(t, d), d.Offset)
		}
		if err := s.Ack(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
}
