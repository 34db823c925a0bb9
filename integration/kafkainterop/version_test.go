//go:build kafka

package kafkainterop_test

import (
	"context"
	"database/sql"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"

	paymentv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1"
	"github.com/msgcontract/msgcontract/registry/client"
	"github.com/msgcontract/msgcontract/registry/console"
	"github.com/msgcontract/msgcontract/registry/registrytest"
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
// latest version at the time (v1). Consumed after v2 (which renames
// PaySuccess.amount) was registered, the envelope the consumer hands on,
// and so the dead letter, names v1: the version the frame's id is
// registered as, not 0, which the registry console, showing the Kafka
// dead letters, would decode with the latest (v2). A version the
// producer's envelope names is kept even when the frame's id is another
// version's.
func TestDeadLetterNamesFramedVersion(t *testing.T) {
	ns := kafkatest.Namespace()
	ctx := context.Background()
	dead, err := kafka.New(ctx, kafka.Config{Brokers: kafkatest.Brokers(t), Namespace: ns, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	reg, rc, ui := registryWithConsole(t, dead)
	register(t, rc, "order-event-value", "examples/proto/shop/payment/v1/payment.proto")
	tr := newTransport(t, ns, reg)
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
	v2 := strings.Replace(string(text), "int64 amount = 2;", "int64 amount_cents = 2;", 1)
	if v2 == string(text) {
		t.Fatal("the example contract no longer has int64 amount = 2")
	}
	req, _ := http.NewRequest(http.MethodPut, reg+"/config/order-event-value", strings.NewReader(`{"compatibility":"NONE"}`))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /config/order-event-value: %v %v", resp, err)
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

	var recs []dlq.Record
	waitFor(t, "2 dead letters", func() bool {
		recs, err = tr.List(ctx, dlq.Filter{Topic: "order-event"})
		return err == nil && len(recs) == 2
	})
	want := map[string]int32{"order_id:unnamed:PAY_SUCCESS": 1, "order_id:named:PAY_SUCCESS": 2}
	// What the console shows of each: the version named, the payload decoded with it.
	page := map[string][]string{
		"order_id:unnamed:PAY_SUCCESS": {"order-event-value v1", `&#34;amount&#34;: &#34;1&#34;`},
		"order_id:named:PAY_SUCCESS":   {"order-event-value v2", `&#34;amount_cents&#34;: &#34;2&#34;`},
	}
	for _, r := range recs {
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
		resp, err := http.Get(ui + "/ui/dlq/record?id=" + url.QueryEscape(r.ID))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("console, dead letter %s: HTTP %d", r.ID, resp.StatusCode)
		}
		for _, w := range page[e.GetBizKey()] {
			if !strings.Contains(string(body), w) {
				i := strings.Index(string(body), "decoded with")
				t.Errorf("console, dead letter %s: no %s in\n%.600s", e.GetBizKey(), html.UnescapeString(w), body[max(0, i):])
			}
		}
		if strings.Contains(string(body), "names no <code>schema_version</code>") {
			t.Errorf("console, dead letter %s: the page says the envelope names no version", e.GetBizKey())
		}
	}
}

// registryWithConsole serves msgcontract's registry on a fresh SQLite
// store, with its console showing the dead letters of dead, and returns
// the registry's URL, a client of it and the console's URL (the same).
func registryWithConsole(t *testing.T, dead dlq.Store) (string, *client.Client, string) {
	t.Helper()
	st, srv := registrytest.New(t)
	ui, err := console.New(console.Config{Store: st, API: srv, DLQ: dead, DLQName: "kafka"})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(console.WithAPI(srv, ui))
	t.Cleanup(ts.Close)
	return ts.URL, &client.Client{URL: ts.URL}, ts.URL
}
