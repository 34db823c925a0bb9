package natsjs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs/natsserver"
	"github.com/msgcontract/msgcontract/runtime-go/transport/transporttest"
)

func TestSuite(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T, lease time.Duration) transporttest.Transport {
		return newTransport(t, lease)
	})
}

// TestBacklogRightAfterPublish: the server counts a stored message into
// a consumer's NumPending only after acknowledging the publish, so a
// Backlog asked right after a publish catches that window in some of the
// rounds; it must see the message every time. Each round has its own
// group and topic, so no earlier round's settlement is in flight.
func TestBacklogRightAfterPublish(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr := newTransport(t, time.Minute)
	for i := range 100 {
		group, topic := fmt.Sprintf("g%d", i), fmt.Sprintf("t%d", i)
		sub, err := tr.Subscribe(ctx, group, []string{topic})
		if err != nil {
			t.Fatal(err)
		}
		sub.Close()
		if n, err := tr.Backlog(ctx, group); err != nil || n != 0 {
			t.Fatalf("round %d: backlog before the publish = %d, %v; want 0", i, n, err)
		}
		if err := tr.Publish(ctx, topic, &envelopepb.Envelope{MessageId: "m", BizKey: "k", Topic: topic}); err != nil {
			t.Fatal(err)
		}
		if n, err := tr.Backlog(ctx, group); err != nil || n != 1 {
			t.Fatalf("round %d: backlog right after the publish = %d, %v; want 1", i, n, err)
		}
	}
}

// newTransport starts a NATS server with JetStream on a free loopback
// port and returns a Transport on it, with AckWait lease.
func newTransport(t *testing.T, lease time.Duration) *natsjs.Transport {
	t.Helper()
	return newTransportWith(t, natsjs.Config{AckWait: lease, FetchWait: 100 * time.Millisecond})
}

// newTransportWith starts a NATS server with JetStream and returns a
// Transport on it with cfg (its Conn set).
func newTransportWith(t *testing.T, cfg natsjs.Config) *natsjs.Transport {
	t.Helper()
	ns, err := natsserver.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := ns.Connect()
	if err != nil {
		ns.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close(); ns.Close() })
	cfg.Conn = nc
	tr, err := natsjs.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A fetch for many returns the few that are there instead of waiting for
// the rest until FetchWait (here longer than the test's context), both
// when they are stored before the fetch and when one arrives during it.
func TestFetchReturnsWhatArrived(t *testing.T) {
	t.Parallel()
	tr := newTransportWith(t, natsjs.Config{FetchWait: 10 * time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub, err := tr.Subscribe(ctx, "g", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	publish := func(id string) {
		if err := tr.Publish(ctx, "t", &envelopepb.Envelope{MessageId: id, BizKey: id, Topic: "t"}); err != nil {
			t.Error(err)
		}
	}
	publish("stored")
	ds, err := sub.Fetch(ctx, 64)
	if err != nil || len(ds) != 1 || ctx.Err() != nil {
		t.Fatalf("stored: fetched %d (%v, context %v); want the 1 stored before the context ends", len(ds), err, ctx.Err())
	}
	// The late publish is waited for before the test ends: the consumer
	// can see the message before the publisher has its acknowledgement,
	// and ending the test then would cancel the publish mid-flight.
	published := make(chan struct{})
	time.AfterFunc(200*time.Millisecond, func() { defer close(published); publish("arrived") })
	ds, err = sub.Fetch(ctx, 64)
	<-published
	if err != nil || len(ds) != 1 || ctx.Err() != nil {
		t.Fatalf("arrived: fetched %d (%v, context %v); want the 1 that arrived before the context ends", len(ds), err, ctx.Err())
	}
}

// PublishBatch stores the envelopes in order; at one the client refuses
// (larger than the server's max payload) it stops: what came before is
// stored, nothing after it is sent, and it reports the failure.
func TestPublishBatch(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := newTransport(t, time.Minute)
	sub, err := tr.Subscribe(ctx, "g", []string{"t"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	envs := func(ids ...string) []*envelopepb.Envelope {
		var out []*envelopepb.Envelope
		for _, id := range ids {
			out = append(out, &envelopepb.Envelope{MessageId: id, BizKey: "k", Topic: "t", EventType: "E"})
		}
		return out
	}
	if err := tr.PublishBatch(ctx, "t", envs("a", "b", "c", "d")); err != nil {
		t.Fatal(err)
	}
	batch := envs("e", "huge", "f")
	batch[1].Payload = make([]byte, 2<<20)
	if err := tr.PublishBatch(ctx, "t", batch); err == nil {
		t.Fatal("a batch with an envelope over the max payload published without an error")
	}
	var got []string
	for len(got) < 5 {
		ds, err := sub.Fetch(ctx, 64)
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		for _, d := range ds {
			env, err := envelope.Unmarshal(d.Body)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, env.GetMessageId())
		}
	}
	if fmt.Sprint(got) != "[a b c d e]" {
		t.Fatalf("stored %v, want [a b c d e]", got)
	}
	if n, err := tr.Backlog(ctx, "g"); err != nil || n != 5 {
		t.Fatalf("backlog %d (%v), want the 5 stored and nothing after the refused one", n, err)
	}
}
