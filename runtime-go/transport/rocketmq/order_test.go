//go:build rocketmq

package rocketmq_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq"
)

// TestKeyOrder: a key's messages are handed out one at a time, in publish
// order, while other keys' go on. Four workers fetch concurrently and hold
// each delivery a few milliseconds before acknowledging it; 20 keys' 5
// messages each, published one key after another (so a fetch would take
// several of one key), must reach them so that no two of a key are out at
// once and each key's come in the order published.
func TestKeyOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr := newTransport(t, func(c *rocketmq.Config) { c.QueueNums = 2 })
	sub, err := tr.Subscribe(ctx, "g", []string{"orders"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	const keys, per = 20, 5
	want := map[string][]string{}
	for k := range keys {
		for i := range per {
			key, id := fmt.Sprint("order-", k), fmt.Sprintf("m-%d-%d", k, i)
			want[key] = append(want[key], id)
			if err := tr.Publish(ctx, "orders", &envelopepb.Envelope{MessageId: id, BizKey: key, EventType: "E", Topic: "orders"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var (
		mu      sync.Mutex
		got     = map[string][]string{}
		out     = map[string]bool{}
		overlap []string
		n       int
	)
	fctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				mu.Lock()
				finished := n == keys*per
				mu.Unlock()
				if finished {
					return
				}
				ds, err := sub.Fetch(fctx, 3)
				if err != nil {
					return
				}
				for _, d := range ds {
					env, err := envelope.Unmarshal(d.Body)
					if err != nil {
						t.Error(err)
						return
					}
					key := env.GetBizKey()
					mu.Lock()
					if out[key] {
						overlap = append(overlap, env.GetMessageId())
					}
					out[key] = true
					got[key] = append(got[key], env.GetMessageId())
					mu.Unlock()
					time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond)
					mu.Lock()
					out[key] = false
					if n++; n == keys*per {
						cancel() // the others wait in Fetch
					}
					mu.Unlock()
					if err := sub.Ack(ctx, d); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if len(overlap) > 0 {
		t.Errorf("handed out while an earlier message of their key was out: %v", overlap)
	}
	for key, ids := range want {
		if !slices.Equal(got[key], ids) {
			t.Errorf("%s: handed out %v, want %v", key, got[key], ids)
		}
	}
}
