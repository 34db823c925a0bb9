//go:build kafka

package kafkainterop_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"

	paymentv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/confluent"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka/kafkatest"
)

// TestDeadLetterNamesFramedVersion: a generated producer names no
// schema_version, and its record is framed with the id of the subject's
// latest version at the time (v1). Consumed after v2 was registered, the
// envelope the consumer hands on, and so the dead letter, names v1: the
// version the frame's id is registered as, not 0 (which the console would
// read as "latest", v2). A version the producer's envelope names is kept
// even when the frame's id is another version's.
func TestDeadLetterNamesFramedVersion(t *testing.T) {
	reg, rc := startRegistry(t) // order-event-value v1
	ns := kafkatest.Namespace()
	tr := newTransport(t, ns, reg)
	ctx := context.Background()
	if err := paymentv1.PublishPaySuccess(ctx, tr, &paymentv1.PaySuccess{OrderId: "unnamed", Amount: 1}, event.Options{}); err != nil {
		t.Fatal(err)
	}
	v1ID, err := confluent.NewClient(reg, nil).ID(ctx, "order-event-value", 1)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, "examples/proto/shop/payment/v1/payment.proto"))
	if err != nil {
		t.Fatal(err)
	}
	v2 := strings.Replace(string(text), "string currency = 3;\n}", "string currency = 3;\n  string note = 4;\n}", 1)
	if v2 == string(text) {
		t.Fatal("the example contract's PaySuccess no longer ends with currency = 3")
	}
	v2ID, version, err := rc.Register(ctx, "order-event-value", v2, nil)
	if err != nil || version != 2 || int32(v2ID) == v1ID {
		t.Fatalf("registering v2: id %d (v1's %d), version %d, %v", v2ID, v1ID, version, err)
	}

	// The producer says v2; the frame carries v1's id: the producer's word is kept.
	env, err := paymentv1.NewPaySuccessEnvelope(&paymentv1.PaySuccess{OrderId: "named", Amount: 2}, event.Options{})
	if err != nil {
		t.Fatal(err)
	}
	env.SchemaSubject, env.SchemaVersion = "order-event-value", 2
	h := proto.Clone(env).(*envelopepb.Envelope)
	h.Payload = nil
	hb, err := envelope.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkatest.Brokers(t)...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: ns + "order-event", Key: []byte(env.GetBizKey()),
		Value:   confluent.Frame(v1ID, []int{0}, env.GetPayload()),
		Headers: []kgo.RecordHeader{{Key: kafka.HeaderEnvelope, Value: hb}}}).FirstErr(); err != nil {
		t.Fatal(err)
	}

	c, err := consumer.New(consumer.Config{DB: sqliteDB(t), Dialect: sqldb.SQLite, Subscriber: tr, Group: "payments"})
	if err != nil {
		t.Fatal(err)
	}
	err = paymentv1.RegisterPaySuccessHandler(c, "payments.pay", func(context.Context, *sql.Tx, *paymentv1.PaySuccess) error {
		return classify.NewError(40001, "order unknown")
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	var dead []dlq.Record
	waitFor(t, "2 dead letters", func() bool {
		dead, err = tr.List(ctx, dlq.Filter{Topic: "order-event"})
		return err == nil && len(dead) == 2
	})
	want := map[string]int32{"order_id:unnamed:PAY_SUCCESS": 1, "order_id:named:PAY_SUCCESS": 2}
	for _, r := range dead {
		if r.Reason != dlq.ReasonNonRetryable {
			t.Errorf("dead letter %s: reason %s (%s), want non_retryable", r.BizKey, r.Reason, r.Error)
		}
		e, err := envelope.Unmarshal(r.Envelope)
		if err != nil {
			t.Fatalf("dead letter %s: %v", r.BizKey, err)
		}
		v, ok := want[e.GetBizKey()]
		if !ok {
			t.Fatalf("unexpected dead letter %s", e.GetBizKey())
		}
		if e.GetSchemaSubject() != "order-event-value" || e.GetSchemaVersion() != v {
			t.Errorf("dead letter %s names %s v%d, want order-event-value v%d", e.GetBizKey(),
				e.GetSchemaSubject(), e.GetSchemaVersion(), v)
		}
	}
}
