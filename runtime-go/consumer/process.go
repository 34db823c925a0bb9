package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// process runs DESIGN.md's steps 1-5 on one delivery and settles it.
func (c *Consumer) process(ctx context.Context, sub transport.Subscription, d *transport.Delivery) {
	if it := c.prepare(ctx, sub, d); it != nil && !c.prefiltered(ctx, sub, it) {
		c.runTx(ctx, sub, []*item{it})
	}
}

// item is a delivery that passed steps 1 and 2.
type item struct {
	d    *transport.Delivery
	env  *envelopepb.Envelope
	r    *route
	msg  any
	hash string  // dedup.HashMessage of the payload
	log  *msgLog // &logv
	logv msgLog
}

// prepare runs steps 1 (decode; failure: dead-letter) and 2 (not yet due:
// defer). It returns nil when it settled the delivery.
func (c *Consumer) prepare(ctx context.Context, sub transport.Subscription, d *transport.Delivery) *item {
	it, log, settle := c.check(d)
	c.startSpan(ctx, log)
	if settle == nil {
		if row, ok := c.superseded(ctx, it); ok {
			settle = func(ctx context.Context, sub transport.Subscription) { c.dropSuperseded(ctx, sub, it, row) }
		}
	}
	if settle != nil {
		settle(ctx, sub)
		return nil
	}
	return it
}

// decode runs steps 1 and 2 without settling anything: ok is false when
// the delivery has to be dead-lettered or deferred (see prepare).
func (c *Consumer) decode(d *transport.Delivery) (it *item, ok bool) {
	it, _, settle := c.check(d)
	return it, settle == nil
}

// startSpan starts the delivery's consumer span once its envelope decoded
// (a delivery whose envelope does not decode has no trace to join). The
// folded path starts it only for the deliveries it goes on to handle, so
// a delivery that falls back to the ordinary path gets one span, not two.
func (c *Consumer) startSpan(ctx context.Context, log *msgLog) {
	if c.cfg.Tracer != nil && log.env != nil && log.span == nil {
		var where []attribute.KeyValue
		if c.cfg.Tracer.System() == tracing.SystemKafka {
			where = tracing.KafkaLocation(log.d.Partition, log.d.Offset)
		}
		_, log.span = c.cfg.Tracer.StartProcess(ctx, log.d.Topic, c.cfg.Group, log.env, where...)
	}
}

// check runs steps 1 and 2: it returns the item, or how to settle a
// delivery that does not get that far, and the delivery's log context.
func (c *Consumer) check(d *transport.Delivery) (*item, *msgLog, func(ctx context.Context, sub transport.Subscription)) {
	// The item and its log context are one object; a delivery that stops
	// short of an item keeps only the log context in use.
	it := &item{d: d, logv: msgLog{base: c.cfg.Logger, d: d}}
	log := &it.logv
	it.log = log

	// Step 1: decode.
	env, err := envelope.Unmarshal(d.Body)
	if err != nil {
		return nil, log, func(ctx context.Context, sub transport.Subscription) {
			c.deadLetterDecode(ctx, sub, d, nil, nil, err, log)
		}
	}
	log.env = env
	// The topic it was delivered from decides; the envelope's own topic
	// is the fallback for transports that cannot tell.
	topic := d.Topic
	r := c.lookup(topic, env.GetEventType())
	if r == nil && env.GetTopic() != "" && env.GetTopic() != topic {
		topic = env.GetTopic()
		r = c.lookup(topic, env.GetEventType())
	}
	if r == nil {
		return nil, log, func(ctx context.Context, sub transport.Subscription) {
			c.deadLetter(ctx, sub, d, env, nil, Decide(Attempt{Kind: NoHandler}, backoff.Policy{}, 0),
				fmt.Sprintf("no handler for event type %q on topic %q in group %q", env.GetEventType(), topic, c.cfg.Group), log)
		}
	}
	log.handler = r.name
	msg, err := r.decode(env)
	if err != nil {
		return nil, log, func(ctx context.Context, sub transport.Subscription) {
			c.deadLetterDecode(ctx, sub, d, env, r, err, log)
		}
	}

	// Step 2: not yet due.
	if nb := env.GetNotBefore(); nb > c.cfg.Now().UnixMilli() {
		return nil, log, func(ctx context.Context, sub transport.Subscription) {
			err := c.settle(ctx, tracing.OpNack, []*transport.Delivery{d}, func() error {
				return sub.Defer(ctx, d, time.UnixMilli(nb))
			})
			if err != nil {
				log.get().Error("msgcontract: defer failed", "error", err)
			}
			tracing.End(log.span, "deferred", err)
		}
	}
	hash, err := dedup.HashMessage(msg.(proto.Message))
	if err != nil {
		return nil, log, func(ctx context.Context, sub transport.Subscription) {
			c.deadLetterDecode(ctx, sub, d, env, r, err, log)
		}
	}
	it.env, it.r, it.msg, it.hash = env, r, msg, hash
	return it, log, nil
}

// runHandler runs the handler with a timeout and turns a panic into an
// error with CodePanic.
func (c *Consumer) runHandler(ctx context.Context, tx *sql.Tx, env *envelopepb.Envelope, r *route, msg any,
	log *msgLog) (err error) {
	if log.span != nil {
		ctx = trace.ContextWithSpan(ctx, log.span) // the handler's spans are the consumer span's children
	}
	var hctx context.Context
	if ctx.Done() == nil {
		// The usual case (a worker's context cannot be cancelled): a
		// handlerCtx and a pooled timer, not a timer context and a timer
		// per run.
		hc := newHandlerCtx(ctx, env, time.Now().Add(c.cfg.HandlerTimeout))
		w := c.timers.Get().(*deadlineTimer)
		w.watch(hc, c.cfg.HandlerTimeout)
		defer func() {
			w.release()
			c.timers.Put(w)
			hc.cancel(context.Canceled)
		}()
		hctx = hc
	} else {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(withEnvelope(ctx, env), c.cfg.HandlerTimeout)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			log.get().Error("msgcontract: handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = classify.NewError(CodePanic, fmt.Sprintf("panic: %v", p))
		}
	}()
	err = r.run(hctx, tx, msg)
	// A driver may report the timeout its own way (PostgreSQL: "canceling
	// statement due to user request"); the deadline having passed decides.
	if err != nil && errors.Is(hctx.Err(), context.DeadlineExceeded) {
		if _, coded := classify.CodeOf(err); !coded {
			err = classify.Errorf(CodeTimeout, "handler timed out after %v: %w", c.cfg.HandlerTimeout, err)
		}
	}
	return err
}

// fail classifies a handler failure and retries or dead-letters, as
// Decide decides.
func (c *Consumer) fail(ctx context.Context, sub transport.Subscription, d *transport.Delivery,
	env *envelopepb.Envelope, r *route, herr error, log *msgLog) {
	res := r.spec.Rules.Err(herr)
	code, _ := classify.CodeOf(herr)
	now := c.cfg.Now()
	if !c.advanceChain(ctx, sub, d, env, r, now, log) {
		return
	}
	dec := Decide(Attempt{Kind: Failed, Class: res, Code: code, RetryCount: int(env.GetRetryCount())},
		r.spec.Policy, c.cfg.Rand())
	if dec.Action == ActRetry {
		delayMs := dec.DelayMs
		retry := retryEnvelope(env, herr, code, res, now, delayMs)
		if err := sub.Retry(ctx, d, retry); err != nil {
			log.get().Error("msgcontract: retry publish failed; the delivery will come back", "error", err)
			tracing.End(log.span, "handed_back", err)
			return
		}
		delay := time.Duration(delayMs) * time.Millisecond
		r.metrics.Inc(metrics.OutcomeRetryScheduled)
		r.metrics.ObserveRetryDelay(delay)
		tracing.End(log.span, metrics.OutcomeRetryScheduled, herr, tracing.KeyRetryDelay.Float64(delay.Seconds()),
			tracing.ErrorType(code))
		log.get().Warn("msgcontract: handler failed, retry scheduled", "outcome", metrics.OutcomeRetryScheduled,
			"error", herr, "code", code, "range", res.Range, "next_retry", dec.NextRetry,
			"delay_seconds", delay.Seconds(), "not_before", time.UnixMilli(retry.NotBefore).UTC())
		return
	}
	c.deadLetter(ctx, sub, d, env, r, dec, herr.Error(), log)
}

func (c *Consumer) deadLetterDecode(ctx context.Context, sub transport.Subscription, d *transport.Delivery,
	env *envelopepb.Envelope, r *route, err error, log *msgLog) {
	c.deadLetter(ctx, sub, d, env, r, Decide(Attempt{Kind: Undecodable}, backoff.Policy{}, 0), err.Error(), log)
}

func (c *Consumer) deadLetter(ctx context.Context, sub transport.Subscription, d *transport.Delivery,
	env *envelopepb.Envelope, r *route, dec Decision, msg string, log *msgLog) {
	now := c.cfg.Now()
	reason, code := dec.Reason, dec.Code
	rec := &dlq.Record{
		Topic: d.Topic, Group: c.cfg.Group, Envelope: d.Body, Reason: reason, Code: code,
		Error: truncate(msg, MaxErrorMessage), FirstFailedAt: now, LastFailedAt: now, DeadAt: now,
	}
	handler := ""
	if r != nil {
		handler = r.name
		rec.Handler = r.name
	}
	if env != nil {
		rec.EventType, rec.BizKey, rec.MessageID = env.GetEventType(), env.GetBizKey(), env.GetMessageId()
		if rec.Topic == "" {
			rec.Topic = env.GetTopic()
		}
		if ff := env.GetFirstFailedAt(); ff > 0 {
			rec.FirstFailedAt = time.UnixMilli(ff)
		}
		rec.Attempts = dec.Attempts
	}
	if err := sub.DeadLetter(ctx, d, rec); err != nil {
		log.get().Error("msgcontract: dead-letter failed; the delivery will come back", "error", err)
		tracing.End(log.span, "handed_back", err)
		return
	}
	if r != nil && env != nil {
		r.metrics.Inc(metrics.OutcomeDeadLettered) // a route's event type is its envelopes'
	} else {
		c.cfg.Metrics.Inc(handler, rec.EventType, metrics.OutcomeDeadLettered)
	}
	tracing.End(log.span, metrics.OutcomeDeadLettered, errors.New(rec.Error), tracing.KeyDeadLetter.String(string(reason)),
		tracing.ErrorType(code))
	// A dead letter is an outcome the contract foresees (a poison message,
	// a non-retryable code, retries spent), kept for a human in the dlq
	// store and counted by the metrics: a warning with a short reason,
	// the record holds the whole error.
	log.get().Warn("msgcontract: dead-lettered", "outcome", metrics.OutcomeDeadLettered, "reason", string(reason), "code", code, "attempts", rec.Attempts,
		"error", logLine(rec.Error))
}

// infraFailure hands an item back when the database failed: the message
// is not at fault, so no retry is counted.
func (c *Consumer) infraFailure(ctx context.Context, sub transport.Subscription, it *item, step string, err error) {
	it.log.get().Error("msgcontract: database failure, message handed back", "step", step, "error", err,
		"delay", c.cfg.InfraRetryDelay)
	it.r.metrics.IncHandedBack()
	tracing.End(it.log.span, "handed_back", err)
	derr := c.settle(ctx, tracing.OpNack, []*transport.Delivery{it.d}, func() error {
		return sub.Defer(ctx, it.d, c.cfg.Now().Add(c.cfg.InfraRetryDelay))
	})
	if derr != nil {
		it.log.get().Error("msgcontract: defer failed", "error", derr)
	}
}

func (c *Consumer) ack(ctx context.Context, sub transport.Subscription, d *transport.Delivery, log *msgLog) {
	if err := sub.Ack(ctx, d); err != nil {
		log.get().Error("msgcontract: ack failed; the delivery will come back and be deduplicated", "error", err)
	}
}

// prefiltered settles a delivery the prefilter knows as committed with the
// same payload: counted deduplicated, acknowledged. A different payload (a
// key conflict) and any prefilter error fall through to the database.
func (c *Consumer) prefiltered(ctx context.Context, sub transport.Subscription, it *item) bool {
	if c.cfg.Prefilter == nil {
		return false
	}
	prior, hash, found, err := c.cfg.Prefilter.Lookup(ctx, it.env.GetBizKey(), it.r.name)
	if err != nil {
		it.log.get().Warn("msgcontract: prefilter lookup failed; asking the database", "error", err)
		return false
	}
	if !found {
		return false
	}
	if hash != it.hash {
		// A conflict: the database records it durably.
		return false
	}
	it.r.metrics.Inc(metrics.OutcomeDeduplicated)
	tracing.End(it.log.span, metrics.OutcomeDeduplicated, nil)
	it.log.get().Debug("msgcontract: deduplicated by the prefilter", "outcome", metrics.OutcomeDeduplicated, "prior_message_id", prior)
	c.ack(ctx, sub, it.d, it.log)
	return true
}

// record tells the prefilter that env's claim is committed.
func (c *Consumer) record(ctx context.Context, it *item, messageID, hash string) {
	if c.cfg.Prefilter == nil {
		return
	}
	if err := c.cfg.Prefilter.Record(ctx, it.env.GetBizKey(), it.r.name, messageID, hash); err != nil {
		it.log.get().Warn("msgcontract: prefilter record failed", "error", err)
	}
}
