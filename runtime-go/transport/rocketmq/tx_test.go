//go:build rocketmq

package rocketmq_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq"
	"github.com/msgcontract/msgcontract/runtime-go/txcheck"
)

// txFixture is a business database with the check-back table and a table
// of effects, a transport, and a subscription of group "g" to topic
// "payments" started before anything is sent.
type txFixture struct {
	tr  *rocketmq.Transport
	db  *sql.DB
	sub transport.Subscription
}

func newTxFixture(t *testing.T) *txFixture {
	t.Helper()
	ctx := context.Background()
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "business.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := txcheck.Migrate(ctx, db, sqldb.SQLite); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE effects (message_id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	tr := newTransport(t, func(c *rocketmq.Config) { c.TransactionTopics = []string{"payments"} })
	if err := tr.EnsureTopics(ctx, []string{"payments"}, []string{"g"}); err != nil {
		t.Fatal(err)
	}
	sub, err := tr.Subscribe(ctx, "g", []string{"payments"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sub.Close() })
	return &txFixture{tr: tr, db: db, sub: sub}
}

func (f *txFixture) producer(t *testing.T, unresolved time.Duration) *rocketmq.TxProducer {
	t.Helper()
	p, err := f.tr.NewTxProducer(context.Background(), rocketmq.TxConfig{DB: f.db, Dialect: sqldb.SQLite,
		Topics: []string{"payments"}, Unresolved: unresolved})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func paymentEnvelope(key string) *envelopepb.Envelope {
	return &envelopepb.Envelope{MessageId: event.NewMessageID(), BizKey: key, EventType: "PAID", Topic: "payments"}
}

// effect is a business change: one row per message.
func effect(env *envelopepb.Envelope) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO effects (message_id) VALUES ($1)`, env.GetMessageId())
		return err
	}
}

// received returns the message ids delivered to the subscription within
// wait, acknowledging each.
func (f *txFixture) received(t *testing.T, wait time.Duration) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var ids []string
	for {
		ds, err := f.sub.Fetch(ctx, 16)
		if err != nil {
			return ids
		}
		for _, d := range ds {
			env, err := envelope.Unmarshal(d.Body)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, env.GetMessageId())
			if err := f.sub.Ack(context.Background(), d); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func (f *txFixture) rows(t *testing.T, table, id string) int {
	t.Helper()
	var n int
	if err := f.db.QueryRow(`SELECT count(*) FROM `+table+` WHERE message_id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The broker checks an unresolved half message back after 2 s, every 2 s
// (scripts/rocketmq-start.sh): quiet is long enough to see a message that
// should not arrive.
const quiet = 5 * time.Second

func TestTxProducerCommitsWithTheBusinessTransaction(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	p := f.producer(t, 0)
	env := paymentEnvelope("order-1")
	if err := p.Send(context.Background(), "payments", env, effect(env)); err != nil {
		t.Fatal(err)
	}
	if f.rows(t, "effects", env.GetMessageId()) != 1 || f.rows(t, txcheck.Table, env.GetMessageId()) != 1 {
		t.Fatal("the effect or the check-back row is missing after Send")
	}
	if got := f.received(t, quiet); len(got) != 1 || got[0] != env.GetMessageId() {
		t.Fatalf("received %q, want [%s] once", got, env.GetMessageId())
	}
}

func TestTxProducerRollsBackWithTheBusinessTransaction(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	p := f.producer(t, 0)
	env := paymentEnvelope("order-2")
	refused := errors.New("insufficient funds")
	err := p.Send(context.Background(), "payments", env, func(ctx context.Context, tx *sql.Tx) error {
		if err := effect(env)(ctx, tx); err != nil {
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("Send: %v, want the work's error", err)
	}
	if f.rows(t, "effects", env.GetMessageId()) != 0 || f.rows(t, txcheck.Table, env.GetMessageId()) != 0 {
		t.Fatal("a rolled-back Send left rows")
	}
	if got := f.received(t, quiet); len(got) != 0 {
		t.Fatalf("received %q after a rollback", got)
	}
}

func TestTxProducerRollsBackPastTheDeadline(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	p := f.producer(t, 2*time.Second) // commits only within 1 s
	env := paymentEnvelope("order-3")
	err := p.Send(context.Background(), "payments", env, func(ctx context.Context, tx *sql.Tx) error {
		time.Sleep(1200 * time.Millisecond)
		return effect(env)(ctx, tx)
	})
	if err == nil || !strings.Contains(err.Error(), "unresolved window") {
		t.Fatalf("Send past the deadline: %v", err)
	}
	if f.rows(t, "effects", env.GetMessageId()) != 0 {
		t.Fatal("the effect committed past the deadline")
	}
	if got := f.received(t, quiet); len(got) != 0 {
		t.Fatalf("received %q past the deadline", got)
	}
}

// A producer dies after the business transaction commits and before its
// verdict reaches the broker; another producer of the group answers the
// check-back from the table, and the message is delivered once.
func TestTxProducerCheckBackCommitsALostVerdict(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	crashing := f.producer(t, 0)
	crashing.SimulateCrash()
	env := paymentEnvelope("order-4")
	if err := crashing.Send(context.Background(), "payments", env, effect(env)); err != nil {
		t.Fatal(err)
	}
	crashing.Close()
	answers := make(chan txcheck.Answer, 64)
	f.producer(t, 0).ObserveChecks(answers)
	if got := f.received(t, 15*time.Second); len(got) != 1 || got[0] != env.GetMessageId() {
		t.Fatalf("received %q, want [%s] once", got, env.GetMessageId())
	}
	if a := <-answers; a != txcheck.Commit {
		t.Fatalf("check-back answered %v, want COMMIT", a)
	}
}

// A producer dies after the business transaction rolled back: the
// check-back answers UNKNOWN within the unresolved window, then ROLLBACK,
// and nothing is delivered.
func TestTxProducerCheckBackRollsBackALostVerdict(t *testing.T) {
	t.Parallel()
	f := newTxFixture(t)
	const window = 6 * time.Second
	crashing := f.producer(t, window)
	crashing.SimulateCrash()
	env := paymentEnvelope("order-5")
	refused := errors.New("refused")
	if err := crashing.Send(context.Background(), "payments", env, func(context.Context, *sql.Tx) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("Send: %v", err)
	}
	crashing.Close()
	answers := make(chan txcheck.Answer, 64)
	f.producer(t, window).ObserveChecks(answers)
	var seen []txcheck.Answer
	timeout := time.After(30 * time.Second)
	for len(seen) == 0 || seen[len(seen)-1] != txcheck.Rollback {
		select {
		case a := <-answers:
			seen = append(seen, a)
		case <-timeout:
			t.Fatalf("check-back answers %v, no ROLLBACK within 30 s", seen)
		}
	}
	if seen[0] != txcheck.Unknown {
		t.Errorf("check-back answers %v: the first, within the window, should be UNKNOWN", seen)
	}
	if got := f.received(t, quiet); len(got) != 0 {
		t.Fatalf("received %q after the check-back rolled back", got)
	}
}
