//go:build rabbitmq

package rabbitmq_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq/rabbitmqtest"
)

// TestWireFormat holds the transport to docs/rabbitmq.md, the contract
// the Java and Python members are written against: a plain AMQP client
// redeclares every exchange and queue with the documented arguments (a
// difference would fail with PRECONDITION_FAILED), and reads an event and
// a retry copy with the documented properties, headers and body.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := rabbitmqtest.Prefix()
	tr := rabbitmqtest.New(t, rabbitmq.Config{Prefix: p})
	sub, err := tr.Subscribe(ctx, "billing", []string{"pay.v1"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()

	conn, err := amqp.Dial(rabbitmqtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	exchanges := []struct {
		name, kind string
		args       amqp.Table
	}{
		{p, "topic", amqp.Table{"alternate-exchange": p + ".unrouted"}},
		{p + ".retry", "direct", nil},
		{p + ".delay", "direct", nil},
		{p + ".unrouted", "fanout", nil},
	}
	for _, x := range exchanges {
		if err := ch.ExchangeDeclare(x.name, x.kind, true, false, false, false, x.args); err != nil {
			t.Fatalf("exchange %s as documented: %v", x.name, err)
		}
	}
	quorum := amqp.Table{"x-queue-type": "quorum"}
	queues := map[string]amqp.Table{
		p + ".unrouted": quorum, p + ".dlq": quorum, p + "/billing/pay.v1": quorum,
		p + ".delay/billing/16": {"x-queue-type": "quorum", "x-message-ttl": int64(16), "x-dead-letter-exchange": p + ".retry",
			"x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"},
		p + ".delay/billing/4096": {"x-queue-type": "quorum", "x-message-ttl": int64(4096), "x-dead-letter-exchange": p + ".retry",
			"x-dead-letter-strategy": "at-least-once", "x-overflow": "reject-publish"},
	}
	for q, args := range queues {
		if _, err := ch.QueueDeclare(q, true, false, false, false, args); err != nil {
			t.Fatalf("queue %s as documented: %v", q, err)
		}
	}

	// The plain client reads the group's queue itself.
	env := &envelopepb.Envelope{MessageId: "m1", BizKey: "order:1", EventType: "PAID", Topic: "pay.v1",
		ContentType: "application/protobuf", Payload: []byte{1, 2, 3}}
	if err := tr.Publish(ctx, "pay.v1", env); err != nil {
		t.Fatal(err)
	}
	want, err := envelope.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	m := get(t, ch, p+"/billing/pay.v1")
	if string(m.Body) != string(want) {
		t.Errorf("body is not the envelope's bytes")
	}
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	if !hex32.MatchString(m.MessageId) || m.DeliveryMode != amqp.Persistent || m.ContentType != rabbitmq.ContentType ||
		m.Headers[rabbitmq.HeaderTopic] != "pay.v1" || m.Exchange != p || m.RoutingKey != "pay.v1" {
		t.Errorf("event: message_id %q delivery_mode %d content_type %q headers %v exchange %q key %q",
			m.MessageId, m.DeliveryMode, m.ContentType, m.Headers, m.Exchange, m.RoutingKey)
	}
	if err := m.Ack(false); err != nil {
		t.Fatal(err)
	}

	// A retry copy due in 300 ms: through P.delay/billing/256 with CC,
	// then in the group queue with the not-before header. The
	// subscription is closed at once so the plain client reads the copy.
	if err := tr.Publish(ctx, "pay.v1", env); err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ds, err := sub.Fetch(fctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	env.RetryCount, env.NotBefore = 1, time.Now().Add(300*time.Millisecond).UnixMilli()
	if err := sub.Retry(ctx, ds[0], env); err != nil {
		t.Fatal(err)
	}
	sub.Close()
	m = get(t, ch, p+"/billing/pay.v1")
	deaths, _ := m.Headers["x-death"].([]any)
	var dq any
	if len(deaths) > 0 {
		dq = deaths[0].(amqp.Table)["queue"]
	}
	if m.Headers[rabbitmq.HeaderNotBefore] != env.NotBefore || fmt.Sprint(m.Headers["CC"]) != "["+p+"/billing/pay.v1]" ||
		dq != p+".delay/billing/256" || m.MessageId == ds[0].ID || !hex32.MatchString(m.MessageId) {
		t.Errorf("retry copy: message_id %q (original %q) headers %v", m.MessageId, ds[0].ID, m.Headers)
	}
	if got, err := envelope.Unmarshal(m.Body); err != nil || got.GetRetryCount() != 1 || got.GetNotBefore() != env.NotBefore {
		t.Errorf("retry copy's envelope: %v %v", got, err)
	}
	if err := m.Ack(false); err != nil {
		t.Fatal(err)
	}
}

// get polls q with basic.get until a message is there.
func get(t *testing.T, ch *amqp.Channel, q string) amqp.Delivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m, ok, err := ch.Get(q, false)
		if err != nil {
			t.Fatalf("basic.get %s: %v", q, err)
		}
		if ok {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing in %s within 30s", q)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The outbox relay publishes through the transport, each publish
// confirmed before its row is marked sent: rows written in business
// transactions arrive, in order.
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
	tr := rabbitmqtest.New(t, rabbitmq.Config{Topology: map[string][]string{"sem": {"g"}}})
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
	sub, err := tr.Subscribe(ctx, "g", []string{"sem"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for i := range 3 {
		ds, err := sub.Fetch(fctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		env, err := envelope.Unmarshal(ds[0].Body)
		if err != nil || env.GetMessageId() != fmt.Sprint("m", i) || env.GetTopic() != "sem" {
			t.Fatalf("delivery %d: %v %v", i, env, err)
		}
		if err := sub.Ack(ctx, ds...); err != nil {
			t.Fatal(err)
		}
	}
}
