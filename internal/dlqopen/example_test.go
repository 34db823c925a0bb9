package dlqopen_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/msgcontract/msgcontract/internal/dlqopen"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// What `msgcontract dlq list | show | replay | purge --queue queue.db` does.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dlq")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "queue.db")
	deadLetterOne(ctx, path) // a consumer gave up on one message

	store, err := dlqopen.Open(ctx, path) // or "nats://127.0.0.1:4222"
	if err != nil {
		panic(err)
	}
	defer store.Close()

	recs, _ := store.List(ctx, dlq.Filter{Topic: "order-event"}) // list
	for _, r := range recs {
		fmt.Println(r.ID, r.Topic, r.Group, r.BizKey, r.Reason, r.Code, r.Attempts)
	}
	r, _ := store.Get(ctx, recs[0].ID) // show
	env, _ := envelope.Unmarshal(r.Envelope)
	js, _ := envelope.MarshalJSON(env)
	fmt.Println(len(js) > 0)
	_ = store.Replay(ctx, r.ID)                                    // replay
	replayed, _ := store.List(ctx, dlq.Filter{OnlyReplayed: true}) // history kept
	purged, _ := store.Purge(ctx, dlq.Filter{IDs: []string{r.ID}}) // purge
	fmt.Println(len(replayed), replayed[0].ReplayCount, purged)
	// Output:
	// 1 order-event payments order_id:1:PAY_SUCCESS retries_exhausted 50301 7
	// true
	// 1 1 1
}

func deadLetterOne(ctx context.Context, path string) {
	tr, _ := sqlitequeue.Open(ctx, path, sqlitequeue.Config{})
	defer tr.Close()
	sub, _ := tr.Subscribe(ctx, "payments", []string{"order-event"})
	env := &envelopepb.Envelope{BizKey: "order_id:1:PAY_SUCCESS", EventType: "PAY_SUCCESS", Topic: "order-event", RetryCount: 6}
	_ = tr.Publish(ctx, "order-event", env)
	ds, _ := sub.Fetch(ctx, 1)
	_ = sub.DeadLetter(ctx, ds[0], &dlq.Record{Topic: "order-event", Group: "payments", Handler: "record-payment",
		EventType: "PAY_SUCCESS", BizKey: env.BizKey, Envelope: ds[0].Body, Reason: dlq.ReasonRetriesExhausted,
		Code: 50301, Error: "bank timeout", Attempts: 7})
}
