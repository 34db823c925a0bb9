package transporttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// RetryDelays drives keys messages of topic through retries retries each
// on policy's real schedule (sub subscribes to topic), fails t when a
// retry copy reaches Fetch before its not_before, and returns a line
// saying how late the copies came: n, p50, p99, max, min and how many
// came within ±50 ms. How late depends on the machine's load, so callers
// report the line rather than assert on it.
func RetryDelays(t *testing.T, ctx context.Context, pub transport.Publisher, sub transport.Subscription, topic string,
	policy backoff.Policy, keys, retries int) string {
	t.Helper()
	for i := range keys {
		if err := pub.Publish(ctx, topic, &envelopepb.Envelope{MessageId: fmt.Sprint("m", i), BizKey: fmt.Sprint("k", i),
			Topic: topic, EventType: "E"}); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu   sync.Mutex
		late []time.Duration
		wg   sync.WaitGroup
		errs = make(chan error, keys)
	)
	done := 0
	for done < keys {
		ds, err := sub.Fetch(ctx, 500)
		if err != nil {
			t.Fatalf("fetch after %d retries: %v", len(late), err)
		}
		arrived := time.Now()
		for _, d := range ds {
			env, err := envelope.Unmarshal(d.Body)
			if err != nil {
				t.Fatal(err)
			}
			if nb := env.GetNotBefore(); nb > 0 {
				mu.Lock()
				late = append(late, arrived.Sub(time.UnixMilli(nb)))
				mu.Unlock()
			}
			if int(env.GetRetryCount()) >= retries {
				done++
				if err := sub.Ack(ctx, d); err != nil {
					t.Fatal(err)
				}
				continue
			}
			wg.Add(1)
			go func() { // a slow publish must not hold up the other keys
				defer wg.Done()
				env.RetryCount++
				env.NotBefore = time.Now().UnixMilli() + policy.Delay(int(env.RetryCount), rand.Float64())
				if err := sub.Retry(ctx, d, env); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(late) != keys*retries {
		t.Fatalf("%d retry copies arrived, want %d", len(late), keys*retries)
	}
	slices.Sort(late)
	if late[0] < 0 {
		t.Errorf("a retry copy reached Fetch %v before its not_before", -late[0])
	}
	q := func(p float64) time.Duration { return late[int(p*float64(len(late)-1))] }
	ms := func(d time.Duration) string { return fmt.Sprintf("%+dms", d.Round(time.Millisecond).Milliseconds()) }
	within := 0
	for _, l := range late {
		if l >= -50*time.Millisecond && l <= 50*time.Millisecond {
			within++
		}
	}
	return fmt.Sprintf("n=%d p50=%s p99=%s max=%s min=%s within ±50ms: %d of %d (schedule base %dms x%g jitter %dms cap %dms; observed minus scheduled)",
		len(late), ms(q(0.5)), ms(q(0.99)), ms(late[len(late)-1]), ms(late[0]), within, len(late),
		policy.BaseMs, policy.Multiplier, policy.JitterMs, policy.MaxDelayMs)
}
