package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// pacer publishes the deliveries at a steady rate (-rate), as a producer
// would, so that the queue stays short and a retry is due while the
// consumers are not behind: its timing can then be held to the schedule.
// A batch whose publish fails (the broker restarting) is published again
// until it goes through, and the pace resumes from there (no burst); a copy the
// broker took before failing is a duplicate delivery, which the
// consumers' claims absorb.
type pacer struct {
	cancel context.CancelFunc
	done   chan struct{}
	left   atomic.Int64
	mu     sync.Mutex
	err    error
}

// pacerTick is how often the pacer publishes what is due.
const pacerTick = 20 * time.Millisecond

func startPacer(q queue, deliveries []*envelopepb.Envelope, rate int) *pacer {
	ctx, cancel := context.WithCancel(context.Background())
	p := &pacer{cancel: cancel, done: make(chan struct{})}
	p.left.Store(int64(len(deliveries)))
	go func() {
		defer close(p.done)
		start, sent := time.Now(), 0
		tick := time.NewTicker(pacerTick)
		defer tick.Stop()
		failing := time.Time{}
		for sent < len(deliveries) {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			due := min(len(deliveries), int(time.Since(start).Seconds()*float64(rate)))
			if step := max(1, rate/50); due-sent > rate/2 {
				// Half a second behind: a publish blocked or failed
				// (the broker restarting). Go on at the rate from here,
				// without a burst of what the outage held back: a
				// burst's backlog would make every retry behind it late.
				start = start.Add(time.Duration(float64(due-sent-step) / float64(rate) * float64(time.Second)))
				due = sent + step
			}
			for sent < due {
				batch := deliveries[sent:min(due, sent+1000)]
				if err := q.publish(ctx, batch); err != nil {
					if ctx.Err() != nil {
						return
					}
					if failing.IsZero() {
						failing = time.Now()
					}
					if time.Since(failing) > 2*time.Minute {
						p.mu.Lock()
						p.err = fmt.Errorf("publish: failing for 2 minutes: %w", err)
						p.mu.Unlock()
						return
					}
					break // again at the next tick
				}
				failing = time.Time{}
				sent += len(batch)
				p.left.Store(int64(len(deliveries) - sent))
			}
		}
	}()
	return p
}

// unpublished is how many deliveries are still to be published.
func (p *pacer) unpublished() int { return int(p.left.Load()) }

// failed is the error that stopped the pacer, if one did.
func (p *pacer) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *pacer) stop() {
	p.cancel()
	<-p.done
}
