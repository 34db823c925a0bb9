package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	paymentv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/console"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

const (
	token   = "s3cret-token"
	subject = "order-event-value"
)

// fixture is a registry with the console mounted, a token, and an
// embedded SQLite queue holding one dead letter: a PaySuccess whose
// handler gave up after its retries.
type fixture struct {
	URL   string
	Store *store.Store
	Queue *sqlitequeue.Transport
	// DeadID is the dead letter's id.
	DeadID string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := api.New(api.Config{Store: st, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	q, err := sqlitequeue.Open(ctx, filepath.Join(dir, "queue.db"), sqlitequeue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	ui, err := console.New(console.Config{Store: st, API: srv, Token: token, DLQ: q, DLQName: "queue.db", PageSize: 20})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(console.WithAPI(srv, ui))
	t.Cleanup(hs.Close)
	return &fixture{URL: hs.URL, Store: st, Queue: q, DeadID: deadLetter(t, q)}
}

// queue is what deadLetter needs of a transport: publish, subscribe and
// the dead-letter store.
type queue interface {
	transport.Publisher
	transport.Subscriber
	dlq.Store
}

func deadLetter(t *testing.T, q queue) string {
	t.Helper()
	ctx := context.Background()
	sub, err := q.Subscribe(ctx, "payment-callback", []string{"order-event"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	payload, err := proto.Marshal(&paymentv1.PaySuccess{OrderId: "o-1042", Amount: 12990, Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	env := &envelopepb.Envelope{MessageId: "m-1042", BizKey: "order_id:o-1042:PAY_SUCCESS", EventType: "PAY_SUCCESS",
		SchemaSubject: subject, Topic: "order-event", Payload: payload, RetryCount: 6, OccurredAt: time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC).UnixMilli()}
	if err := q.Publish(ctx, "order-event", env); err != nil {
		t.Fatal(err)
	}
	ds, err := sub.Fetch(ctx, 1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("fetch: %v, %d deliveries", err, len(ds))
	}
	body, _ := envelope.Marshal(env)
	at := time.Date(2026, 12, 2, 9, 30, 1, 0, time.UTC)
	rec := &dlq.Record{Topic: "order-event", Group: "payment-callback", Handler: "PaySuccess", EventType: "PAY_SUCCESS",
		BizKey: env.BizKey, MessageID: env.MessageId, Envelope: body, Reason: dlq.ReasonRetriesExhausted, Code: 50301,
		Error: "ledger answered 503 Service Unavailable", Attempts: 7, FirstFailedAt: at, LastFailedAt: at.Add(63 * time.Second), DeadAt: at.Add(63 * time.Second)}
	if err := sub.DeadLetter(ctx, ds[0], rec); err != nil {
		t.Fatal(err)
	}
	recs, err := q.List(ctx, dlq.Filter{})
	if err != nil || len(recs) != 1 {
		t.Fatalf("list: %v, %d records", err, len(recs))
	}
	return recs[0].ID
}

// paymentV1 is the example payment contract; paymentV2 changes PaySuccess's
// biz_key, which breaks the contract.
func paymentV1(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/proto/shop/payment/v1/payment.proto")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const (
	oldKey = `biz_key: "order_id:{order_id}:PAY_SUCCESS"`
	newKey = `biz_key: "order_id:{order_id}:PAY_SUCCESS:{currency}"`
)

func paymentV2(t *testing.T) string {
	t.Helper()
	v1 := paymentV1(t)
	if !strings.Contains(v1, oldKey) {
		t.Fatalf("the example contract no longer has %s", oldKey)
	}
	return strings.Replace(v1, oldKey, newKey, 1)
}

// lineOf is the 1-based line of the first occurrence of s in text.
func lineOf(text, s string) int {
	return strings.Count(text[:strings.Index(text, s)], "\n") + 1
}

// setLevel sets the subject's level through the REST API.
func (f *fixture) setLevel(t *testing.T, level string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"compatibility": level})
	req, _ := http.NewRequest(http.MethodPut, f.URL+"/config/"+subject, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /config/%s: HTTP %d", subject, resp.StatusCode)
	}
}
