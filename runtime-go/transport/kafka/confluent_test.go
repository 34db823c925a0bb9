//go:build kafka

package kafka_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/confluent"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// A Confluent-framed record reaching a transport without Config.Confluent
// cannot be checked: it is dead-lettered with reason schema, its bytes as
// delivered, and the plain record behind it is handed out. (The registry
// checks themselves run in integration/kafkainterop, against msgcontract's
// registry.)
func TestFramedWithoutRegistryIsDeadLettered(t *testing.T) {
	t.Parallel()
	tr := newTransport(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sub, err := tr.Subscribe(ctx, "g", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	framed := confluent.Frame(1, []int{0}, []byte{0x0a, 0x01, 'x'})
	if err := tr.PublishRaw(ctx, "t", framed); err != nil {
		t.Fatal(err)
	}
	if err := tr.Publish(ctx, "t", &envelopepb.Envelope{BizKey: "k", EventType: "E", MessageId: "m"}); err != nil {
		t.Fatal(err)
	}
	ds, err := sub.Fetch(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || confluent.IsFramed(ds[0].Body) {
		t.Fatalf("fetched %d deliveries, want only the plain envelope", len(ds))
	}
	recs, err := tr.List(ctx, dlq.Filter{Topic: "t", Reason: dlq.ReasonSchema})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || string(recs[0].Envelope) != string(framed) || recs[0].Group != "g" ||
		!strings.Contains(recs[0].Error, "Config.Confluent is not set") {
		t.Fatalf("schema dead letters: %+v", recs)
	}
}
