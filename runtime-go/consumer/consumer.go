// Package consumer runs the effectively-once consume loop of DESIGN.md's
// "Runtime semantics", per message:
//
//  1. decode the envelope and payload; failure: dead-letter, ack;
//  2. not_before in the future: hand back to the transport unacknowledged;
//  3. begin a transaction and claim (biz_key, handler); already claimed:
//     count deduped, commit nothing, ack;
//  4. run the handler in that transaction; success: commit, ack, count
//     processed;
//  5. failure: roll back (the claim goes too), classify, then retry
//     (retry_count+1, not_before = now + backoff, last_error) or
//     dead-letter, and ack. There is never a nack loop.
//
// All state lives in the message and the database: a killed process loses
// nothing, and its unacknowledged deliveries come back after their lease.
package consumer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Consumer receives messages from one transport subscription and runs the
// registered handlers on them.
type Consumer struct {
	cfg   Config
	dedup *dedup.Store

	mu      sync.Mutex
	started bool
	routes  map[routeKey]*route

	// acker acknowledges inside the business transaction; set by Run when
	// the subscription's queue lives in Config.DB.
	acker transport.TxAcker
	// fetcher reads fetches inside the business transaction; set by Run
	// when acker is and the mode is batched (see handleFetchTx).
	fetcher transport.TxFetcher
	// chains keeps each message to one retry chain; set by Run when the
	// subscription is a transport.ForkingRetry (see chain.go).
	chains bool
	// timers holds *deadlineTimer: one per handler running at a time.
	timers sync.Pool
}

// New validates cfg and returns a Consumer. Register handlers, then Run.
func New(cfg Config) (*Consumer, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	store, err := dedup.New(cfg.dedupConfig())
	if err != nil {
		return nil, err
	}
	c := &Consumer{cfg: cfg, dedup: store, routes: map[routeKey]*route{}}
	c.timers.New = func() any { return newDeadlineTimer() }
	return c, nil
}

// Dedup returns the consumer's claim store.
func (c *Consumer) Dedup() *dedup.Store { return c.dedup }

// Run subscribes to the registered handlers' topics and processes messages
// with Config.Workers workers until ctx ends. Then it stops fetching,
// lets every in-flight message finish (its handler keeps a context that
// is not cancelled by ctx, bounded by HandlerTimeout), closes the
// subscription and returns nil. It returns an error when it cannot start,
// including when HandlerTimeout is not shorter than the transport's lease.
func (c *Consumer) Run(ctx context.Context) error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("consumer: Run called twice")
	}
	c.started = true
	topics := c.topics()
	c.mu.Unlock()
	if len(topics) == 0 {
		return errors.New("consumer: no handlers registered")
	}
	if !c.cfg.SkipMigrate {
		if err := c.dedup.Migrate(ctx); err != nil {
			return err
		}
	}
	sub, err := c.cfg.Subscriber.Subscribe(ctx, c.cfg.Group, topics)
	if err != nil {
		return fmt.Errorf("consumer: subscribe %v: %w", topics, err)
	}
	defer sub.Close()
	if ext, ok := sub.(transport.Extender); ok && ext.Lease() > 0 && c.cfg.HandlerTimeout >= ext.Lease() {
		return fmt.Errorf("consumer: HandlerTimeout %v must be shorter than the transport's lease %v "+
			"(sqlitequeue.Config.Lease, natsjs.Config.AckWait): a handler still running when its lease ends "+
			"has its message handed to another consumer; lower HandlerTimeout or raise the lease",
			c.cfg.HandlerTimeout, ext.Lease())
	}
	_, c.chains = sub.(transport.ForkingRetry)
	if a, ok := sub.(transport.TxAcker); ok && a.AckDB() == c.cfg.DB {
		c.acker = a
		if f, ok := sub.(transport.TxFetcher); ok && !c.cfg.PerMessageTx {
			c.fetcher = f
		}
	}

	var wg sync.WaitGroup
	for range c.cfg.Workers {
		wg.Go(func() { c.work(ctx, sub) })
	}
	if c.cfg.CleanupInterval > 0 {
		wg.Go(func() { c.cleanup(ctx) })
	}
	wg.Wait()
	return nil
}

// work is one worker: fetch, process, until ctx ends.
func (c *Consumer) work(ctx context.Context, sub transport.Subscription) {
	// In-flight messages finish even when ctx is cancelled.
	procCtx := context.WithoutCancel(ctx)
	for ctx.Err() == nil {
		var ds []*transport.Delivery
		var err error
		if c.fetcher != nil {
			err = c.fetcher.Ready(ctx)
		} else {
			ds, err = sub.Fetch(ctx, c.cfg.FetchSize)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			c.cfg.Logger.Error("msgcontract: fetch failed", "group", c.cfg.Group, "error", err)
			sleep(ctx, time.Second)
			continue
		}
		if c.fetcher != nil {
			c.handleFetchTx(procCtx, sub, c.fetcher)
		} else {
			c.handleFetch(procCtx, sub, ds)
		}
	}
}

// handleFetch processes one fetch. The deliveries' leases are extended
// while it works, and the acknowledgements of processed and deduplicated
// messages go to the transport together at the end: a crash before that
// redelivers messages whose effects committed, which the claims absorb.
func (c *Consumer) handleFetch(ctx context.Context, sub transport.Subscription, ds []*transport.Delivery) {
	stop := c.keepLeased(sub, ds...)
	defer stop()
	acks := &ackBuffer{Subscription: sub}
	if !c.cfg.PerMessageTx {
		var items []*item
		for _, d := range ds {
			if it := c.prepare(ctx, acks, d); it != nil && !c.prefiltered(ctx, acks, it) {
				items = append(items, it)
			}
		}
		c.runTx(ctx, acks, items)
	} else {
		for _, d := range ds {
			c.process(ctx, acks, d)
		}
	}
	if len(acks.ds) > 0 {
		if err := c.settle(ctx, tracing.OpAck, acks.ds, func() error { return sub.Ack(ctx, acks.ds...) }); err != nil {
			c.cfg.Logger.Error("msgcontract: ack failed; the deliveries will come back and be deduplicated",
				"count", len(acks.ds), "error", err)
		}
	}
}

// ackBuffer collects a fetch's acknowledgements.
type ackBuffer struct {
	transport.Subscription
	ds []*transport.Delivery
}

func (b *ackBuffer) Ack(_ context.Context, ds ...*transport.Delivery) error {
	b.ds = append(b.ds, ds...)
	return nil
}

func (c *Consumer) cleanup(ctx context.Context) {
	t := time.NewTicker(c.cfg.CleanupInterval)
	defer t.Stop()
	for {
		if n, err := c.dedup.Cleanup(ctx, c.cfg.Now()); err != nil {
			if ctx.Err() != nil {
				return
			}
			c.cfg.Logger.Error("msgcontract: dedup cleanup failed", "error", err)
		} else if n > 0 {
			c.cfg.Logger.Info("msgcontract: dedup cleanup", "deleted", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
