// Command e2e exercises generated Go code compiled beside protoc-gen-go's
// output against runtime-go, checking it against DESIGN.md. The Go
// generator's end-to-end test copies it into a generated module and runs
// it; it prints every failed check and exits 1 if there was one.
package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/bizkey"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/statemachine"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"

	editionsv1 "msgcontract.test/conformance/gen/edge/editions/v1"
	keysv1 "msgcontract.test/conformance/gen/edge/keys/v1"
	legacyv1 "msgcontract.test/conformance/gen/edge/legacy/v1"
	inventoryv1 "msgcontract.test/conformance/gen/shop/inventory/v1"
	paymentv1 "msgcontract.test/conformance/gen/shop/payment/v1"
)

var failed int

func check(name string, got, want any) {
	if fmt.Sprint(got) != fmt.Sprint(want) {
		failed++
		fmt.Printf("FAIL %s: got %v, want %v\n", name, got, want)
	}
}

// words formats values separated by spaces.
func words(vs ...any) string { return strings.TrimSuffix(fmt.Sprintln(vs...), "\n") }

// keyOf renders a key, or the *bizkey.Error code.
func keyOf(m interface{ BizKey() (string, error) }) string {
	k, err := m.BizKey()
	var ke *bizkey.Error
	if errors.As(err, &ke) {
		return "error " + string(ke.Code)
	}
	if err != nil {
		return "untyped error " + err.Error()
	}
	return k
}

// recorder is a transport.Publisher that keeps what it is given.
type recorder struct {
	topic string
	env   *envelopepb.Envelope
}

func (r *recorder) Publish(_ context.Context, topic string, env *envelopepb.Envelope) error {
	r.topic, r.env = topic, env
	return nil
}

var _ transport.Publisher = (*recorder)(nil)

func main() {
	bizKeys()
	classification()
	backoffs()
	transitions()
	producer()
	if err := roundTrip(); err != nil {
		failed++
		fmt.Println("FAIL round trip:", err)
	}
	if failed > 0 {
		fmt.Printf("%d checks failed\n", failed)
		os.Exit(1)
	}
	fmt.Println("e2e: all checks passed")
}

func bizKeys() {
	check("plain", keyOf(&paymentv1.PaySuccess{OrderId: "20250101_0001"}), "order_id:20250101_0001:PAY_SUCCESS")
	check("escaping keeps a:b+c apart from a+b:c",
		keyOf(&paymentv1.RefundSuccess{OrderId: "a:b", RefundId: "c"}) != keyOf(&paymentv1.RefundSuccess{OrderId: "a", RefundId: "b:c"}), true)
	check("escaping", keyOf(&paymentv1.PaySuccess{OrderId: "a b/ü%"}), "order_id:a%20b%2F%C3%BC%25:PAY_SUCCESS")
	check("empty string", keyOf(&paymentv1.PaySuccess{Amount: 1}), "error EMPTY_FIELD")
	check("512 bytes", len(keyOf(&paymentv1.PaySuccess{OrderId: strings.Repeat("x", 491)})), 512)
	check("513 bytes", keyOf(&paymentv1.PaySuccess{OrderId: strings.Repeat("x", 492)}), "error KEY_TOO_LONG")
	_, err := (&paymentv1.PaySuccess{}).BizKey()
	check("errors.Is EMPTY_FIELD", errors.Is(err, &bizkey.Error{Code: bizkey.EmptyField}), true)

	check("integers, bool, enum by name", keyOf(&keysv1.Scalars{
		S: "s", I32: -2147483648, I64: -9223372036854775808, U32: 4294967295, U64: 18446744073709551615,
		Si32: -1, Si64: -2, F32: 3, F64: 4, Sf32: -5, Sf64: -6, B: true, C: keysv1.Color_RED,
	}), "s=s|i32=-2147483648|i64=-9223372036854775808|u32=4294967295|u64=18446744073709551615|si32=-1|si64=-2|f32=3|f64=4|sf32=-5|sf64=-6|b=true|c=RED|{literal}")
	check("zero values and the zero enum value", keyOf(&keysv1.Scalars{S: "s"}),
		"s=s|i32=0|i64=0|u32=0|u64=0|si32=0|si64=0|f32=0|f64=0|sf32=0|sf64=0|b=false|c=COLOR_UNSPECIFIED|{literal}")

	addr := &keysv1.Address{City: "Köln", Zip: proto.String("50667")}
	check("nested", keyOf(&keysv1.Nested{Customer: &keysv1.Customer{Id: "c", Address: addr}}), "c/K%C3%B6ln/50667")
	check("unset sub-message", keyOf(&keysv1.Nested{Customer: &keysv1.Customer{Id: "c"}}), "error EMPTY_FIELD")
	check("unset top sub-message", keyOf(&keysv1.Nested{}), "error EMPTY_FIELD")
	check("absent optional", keyOf(&keysv1.Nested{Customer: &keysv1.Customer{Id: "c", Address: &keysv1.Address{City: "x"}}}), "error EMPTY_FIELD")
	check("nil message", keyOf((*keysv1.Nested)(nil)), "error EMPTY_FIELD")
	check("nil message with presence fields", keyOf((*legacyv1.Legacy)(nil)), "error EMPTY_FIELD")

	kw := &keysv1.Keywords{Type: "t", Func: 7, Range: keysv1.Color_GREEN, Package: true, Opt: proto.Int32(0),
		Choice: &keysv1.Keywords_PickS{PickS: "p"}}
	check("keyword-like fields, optional set to zero, oneof", keyOf(kw), "t:7:GREEN:true:0:p")
	kw.Choice = &keysv1.Keywords_PickI{PickI: 1}
	check("other oneof member", keyOf(kw), "error EMPTY_FIELD")
	check("nested message event", keyOf(&keysv1.Outer_Inner{Id: 9}), "inner:9")

	check("editions: explicit presence set to zero", keyOf(&editionsv1.Shipped{Id: "a", Seq: proto.Int64(0)}), "a:0")
	check("editions: explicit presence unset", keyOf(&editionsv1.Shipped{Id: "a"}), "error EMPTY_FIELD")
	check("editions: implicit presence empty", keyOf(&editionsv1.Shipped{Seq: proto.Int64(1)}), "error EMPTY_FIELD")
	check("proto2", keyOf(&legacyv1.Legacy{Id: proto.String("i"), Kind: legacyv1.Kind_KIND_A.Enum(), N: proto.Int64(-3)}), "i:KIND_A:-3")
	check("proto2 absent field with a default", keyOf(&legacyv1.Legacy{Id: proto.String("i"), N: proto.Int64(1)}), "error EMPTY_FIELD")
}

func classification() {
	r := paymentv1.ClassifyPaySuccess(50301)
	check("system code", words(r.Retryable, r.Range), "true system")
	r = paymentv1.ClassifyPaySuccess(paymentv1.PaySuccessBusinessFrom)
	check("business code", words(r.Retryable, r.Range), "false business")
	check("business range", words(paymentv1.PaySuccessBusinessFrom, paymentv1.PaySuccessBusinessTo), "40000 49999")
	r = paymentv1.ClassifyPaySuccess(70000)
	check("unclassified code", words(r.Retryable, r.Range), "true ")
	r = paymentv1.PaySuccessSpec.Rules.Err(fmt.Errorf("wrapped: %w", classify.NewError(paymentv1.PaySuccessSystemFrom, "db down")))
	check("wrapped coded error", words(r.Retryable, r.Range), "true system")
	r = keysv1.ScalarsSpec.Rules.Err(errors.New("no code"))
	check("no code, unclassified NON_RETRYABLE", words(r.Retryable, r.Range), "false ")
	check("range names become identifiers", keysv1.Scalars5xxServerErrorsFrom, 2000)
}

func backoffs() {
	p := paymentv1.PaySuccessSpec.Policy
	check("d(1)", p.Delay(1, 0), 1000)
	check("d(3)+jitter", p.Delay(3, 0.5), 4500)
	check("d(6)+jitter", p.Delay(6, 0.999), 32999)
	check("6 retries then dead-letter", words(p.DeadLetter(6), p.DeadLetter(7)), "false true")
	inv := inventoryv1.StockDeductedSpec.Policy
	check("event's own policy replaces the file default", inv.Delay(8, 0), 3415)
	check("policy cap", keysv1.ScalarsSpec.Policy.Delay(4, 0), 10000)
	check("max_retries 0", keysv1.NestedSpec.Policy.DeadLetter(1), true)
}

func transitions() {
	tests := []struct {
		from, to paymentv1.OrderState
		want     statemachine.Transit
	}{
		{paymentv1.OrderState_PAYING, paymentv1.OrderState_PAID, statemachine.Allowed},
		{paymentv1.OrderState_PAID, paymentv1.OrderState_PAID, statemachine.Duplicate},
		{paymentv1.OrderState_PAID, paymentv1.OrderState_PAYING, statemachine.Illegal},
		{paymentv1.OrderState_PAYING, paymentv1.OrderState_REFUNDED, statemachine.Illegal},
		{paymentv1.OrderState(99), paymentv1.OrderState(99), statemachine.Illegal},
	}
	for _, tc := range tests {
		check("CanTransit "+tc.from.String()+"->"+tc.to.String(), paymentv1.CanTransitOrderState(tc.from, tc.to), tc.want)
	}
	check("transit strings", words(statemachine.Allowed, statemachine.Duplicate, statemachine.Illegal), "ALLOWED DUPLICATE ILLEGAL")
	check("target state", paymentv1.CanTransitOrderState(paymentv1.OrderState_PAYING, paymentv1.PaySuccessTargetState), statemachine.Allowed)
	check("join", keysv1.CanTransitPhase(keysv1.Phase_PAUSED, keysv1.Phase_DONE), statemachine.Allowed)
	check("second file, same answers", keysv1.CanTransitLight(keysv1.Light_LIGHT_RED, keysv1.Light_LIGHT_GREEN), statemachine.Allowed)
}

func producer() {
	ctx := context.Background()
	m := &paymentv1.PaySuccess{OrderId: "o 1", Amount: 100, Currency: "EUR"}
	at := time.UnixMilli(1700000000000)
	env, err := paymentv1.NewPaySuccessEnvelope(m, event.Options{MessageID: "id-1", OccurredAt: at, Traceparent: "00-abc-def-01"})
	check("envelope error", err, nil)
	check("envelope fields", words(env.GetBizKey(), env.GetEventType(), env.GetTopic(), env.GetSchemaSubject(), env.GetMessageId(), env.GetOccurredAt(), env.GetTrace().GetTraceparent()),
		"order_id:o%201:PAY_SUCCESS PAY_SUCCESS order-event order-event-value id-1 1700000000000 00-abc-def-01")
	var back paymentv1.PaySuccess
	check("payload round trip", words(envelope.DecodePayload(env, &back), proto.Equal(&back, m)), "<nil> true")

	env, err = paymentv1.NewPaySuccessEnvelope(m, event.Options{JSON: true})
	check("JSON payload uses proto names", err == nil && strings.Contains(string(env.GetPayload()), `"order_id"`), true)
	check("fresh message id", len(env.GetMessageId()), 32)

	_, err = paymentv1.NewPaySuccessEnvelope(&paymentv1.PaySuccess{}, event.Options{})
	var ke *bizkey.Error
	check("envelope refuses a bad key", errors.As(err, &ke) && ke.Code == bizkey.EmptyField, true)

	var rec recorder
	check("publish", paymentv1.PublishPaySuccess(ctx, &rec, m, event.Options{}), nil)
	check("published to the contract topic", words(rec.topic, rec.env.GetBizKey()), "order-event order_id:o%201:PAY_SUCCESS")
	check("publish refuses a bad key", paymentv1.PublishPaySuccess(ctx, &rec, &paymentv1.PaySuccess{}, event.Options{}) != nil, true)

	var h paymentv1.PaySuccessHandler = func(context.Context, *sql.Tx, *paymentv1.PaySuccess) error { return nil }
	check("handler type", h(ctx, nil, m), nil)
}

// roundTrip writes a PaySuccess to the outbox in a business transaction,
// relays it to the embedded queue, publishes the same event once more
// directly (a duplicate: same biz_key), and consumes both through the
// generated registration: the handler must commit exactly one business row.
func roundTrip() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "e2e-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := sqlitedb.Open(filepath.Join(dir, "app.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := outbox.Migrate(ctx, db, sqldb.SQLite); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE paid (order_id TEXT NOT NULL, amount INTEGER NOT NULL)`); err != nil {
		return err
	}
	q, err := sqlitequeue.Open(ctx, filepath.Join(dir, "queue.db"), sqlitequeue.Config{})
	if err != nil {
		return err
	}
	defer q.Close()

	m := &paymentv1.PaySuccess{OrderId: "o-1", Amount: 100}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := paymentv1.WritePaySuccessToOutbox(ctx, tx, m, event.Options{}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	n, err := outbox.Pending(ctx, db)
	check("outbox holds the envelope", words(n, err), "1 <nil>")
	relay, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: sqldb.SQLite, Publisher: q})
	if err != nil {
		return err
	}
	sent, err := relay.Flush(ctx)
	check("relay publishes it", words(sent, err), "1 <nil>")
	check("duplicate publish", paymentv1.PublishPaySuccess(ctx, q, m, event.Options{}), nil)

	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: q, Workers: 1})
	if err != nil {
		return err
	}
	var runs atomic.Int32
	err = paymentv1.RegisterPaySuccessHandler(c, "e2e-paid", func(ctx context.Context, tx *sql.Tx, m *paymentv1.PaySuccess) error {
		runs.Add(1)
		_, err := tx.ExecContext(ctx, `INSERT INTO paid (order_id, amount) VALUES (?, ?)`, m.GetOrderId(), m.GetAmount())
		return err
	})
	if err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	// Both deliveries are settled when the queue is empty.
	for {
		pending, err := q.Backlog(ctx, "")
		if err != nil {
			stop()
			return err
		}
		if pending == 0 {
			break
		}
		select {
		case <-ctx.Done():
			stop()
			return fmt.Errorf("queue still holds %d messages", pending)
		case <-time.After(20 * time.Millisecond):
		}
	}
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	var rows int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM paid`).Scan(&rows); err != nil {
		return err
	}
	check("effectively once: one business row for two deliveries", rows, 1)
	check("handler ran once", runs.Load(), 1)
	return nil
}
