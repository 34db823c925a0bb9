package consumer

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// process runs DESIGN.md's steps 1-5 on one delivery and settles it.
func (c *Consumer) process(ctx context.Context, sub transport.Subscription, d *transport.Delivery) {
	if it := c.prepare(ctx, sub, d); it != nil && !c.prefiltered(ctx, sub, it) {
		c.claimAndRun(ctx, sub, it.d, it.env, it.r, it.msg, it.log)
	}
}

// item is a delivery that passed steps 1 and 2.
type item struct {
	d   *transport.Delivery
	env *envelopepb.Envelope
	r   *route
	msg any
	log *slog.Logger
}

// prepare runs steps 1 (decode; failure: dead-letter) and 2 (not yet due:
// defer). It returns nil when it settled the delivery.
func (c *Consumer) prepare(ctx context.Context, sub transport.Subscription, d *transport.Delivery) *item {
	log := c.cfg.Logger.With("transport_id", d.ID, "topic", d.Topic)

	// Step 1: decode.
	env, err := envelope.Unmarshal(d.Body)
	if err != nil {
		c.deadLetterDecode(ctx, sub, d, nil, nil, err, log)
		return nil
	}
	log = log.With("message_id", env.GetMessageId(), "biz_key", env.GetBizKey(),
		"retry_count", env.GetRetryCount(), "event_type", env.GetEventType())
	if tp := env.GetTrace().GetTraceparent(); tp != "" {
		log = log.With("traceparent", tp)
	}
	// The topic it was delivered from decides; the envelope's own topic
	// is the fallback for transports that cannot tell.
	topic := d.Topic
	r := c.lookup(topic, env.GetEventType())
	if r == nil && env.GetTopic() != "" && env.GetTopic() != topic {
		topic = env.GetTopic()
		r = c.lookup(topic, env.GetEventType())
	}
	if r == nil {
		c.deadLetter(ctx, sub, d, env, nil, dlq.ReasonNoHandler, CodeNoHandler,
			fmt.Sprintf("no handler for event type %q on topic %q in group %q", env.GetEventType(), topic, c.cfg.Group), log)
		return nil
	}
	log = log.With("handler", r.name)
	msg, err := r.decode(env)
	if err != nil {
		c.deadLetterDecode(ctx, sub, d, env, r, err, log)
		return nil
	}

	// Step 2: not yet due.
	if nb := env.GetNotBefore(); nb > c.cfg.Now().UnixMilli() {
		if err := sub.Defer(ctx, d, time.UnixMilli(nb)); err != nil {
			log.Error("msgcontract: defer failed", "err", err)
		}
		return nil
	}
	return &item{d: d, env: env, r: r, msg: msg, log: log}
}

func (c *Consumer) claimAndRun(ctx context.Context, sub transport.Subscription, d *transport.Delivery,
	env *envelopepb.Envelope, r *route, msg any, log *slog.Logger) {
	et := env.GetEventType()
	tx, err := c.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		c.infraFailure(ctx, sub, d, "begin transaction", err, log)
		return
	}
	res, err := c.dedup.Claim(ctx, tx, dedup.Claim{
		BizKey: env.GetBizKey(), Handler: r.name, MessageID: env.GetMessageId(),
		PayloadHash: dedup.HashPayload(env.GetPayload()), At: c.cfg.Now(),
	})
	if err != nil {
		_ = tx.Rollback()
		c.infraFailure(ctx, sub, d, "claim", err, log)
		return
	}
	if !res.Claimed {
		_ = tx.Rollback()
		c.cfg.Metrics.IncDeduped(r.name, et)
		if res.Conflict {
			c.cfg.Metrics.IncKeyConflict(r.name, et)
			log.Warn("msgcontract: key conflict: a duplicate biz_key carries a different payload (producer bug); deduplicated",
				"prior_message_id", res.PriorMessageID)
		} else {
			// The claim is committed (PostgreSQL waits for a concurrent
			// claimer to finish), so the prefilter may learn it.
			c.record(ctx, env, r, res.PriorMessageID, log)
			log.Debug("msgcontract: deduplicated", "prior_message_id", res.PriorMessageID)
		}
		c.ack(ctx, sub, d, log)
		return
	}

	start := time.Now()
	herr := c.runHandler(ctx, tx, env, r, msg, log)
	c.cfg.Metrics.ObserveHandler(r.name, et, time.Since(start))
	if herr == nil {
		if err := tx.Commit(); err != nil {
			c.infraFailure(ctx, sub, d, "commit", err, log)
			return
		}
		c.cfg.Metrics.IncProcessed(r.name, et)
		c.record(ctx, env, r, env.GetMessageId(), log)
		c.ack(ctx, sub, d, log)
		return
	}
	// Step 5: the claim is rolled back with the handler's writes, or the
	// retry would be dropped as a duplicate.
	if err := tx.Rollback(); err != nil && !errors.Is(err, sql.ErrTxDone) {
		log.Error("msgcontract: rollback failed", "err", err)
	}
	c.fail(ctx, sub, d, env, r, herr, log)
}

// runHandler runs the handler with a timeout and turns a panic into an
// error with CodePanic.
func (c *Consumer) runHandler(ctx context.Context, tx *sql.Tx, env *envelopepb.Envelope, r *route, msg any,
	log *slog.Logger) (err error) {
	hctx, cancel := context.WithTimeout(withEnvelope(ctx, env), c.cfg.HandlerTimeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			log.Error("msgcontract: handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = classify.NewError(CodePanic, fmt.Sprintf("panic: %v", p))
		}
	}()
	err = r.run(hctx, tx, msg)
	if err != nil && hctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		if _, coded := classify.CodeOf(err); !coded {
			err = classify.Errorf(CodeTimeout, "handler timed out after %v: %w", c.cfg.HandlerTimeout, err)
		}
	}
	return err
}

// fail classifies a handler failure and retries or dead-letters.
func (c *Consumer) fail(ctx context.Context, sub transport.Subscription, d *transport.Delivery,
	env *envelopepb.Envelope, r *route, herr error, log *slog.Logger) {
	et := env.GetEventType()
	res := r.spec.Rules.Err(herr)
	code, _ := classify.CodeOf(herr)
	now := c.cfg.Now()
	next := int(env.GetRetryCount()) + 1
	if res.Retryable && !r.spec.Policy.DeadLetter(next) {
		retry := retryEnvelope(env, herr, code, res, now, r.spec.Policy.Delay(next, c.cfg.Rand()))
		if err := sub.Retry(ctx, d, retry); err != nil {
			log.Error("msgcontract: retry publish failed; the delivery will come back", "err", err)
			return
		}
		c.cfg.Metrics.IncRetried(r.name, et)
		log.Warn("msgcontract: handler failed, retry scheduled", "err", herr, "code", code,
			"range", res.Range, "next_retry", next, "not_before", time.UnixMilli(retry.NotBefore).UTC())
		return
	}
	reason := dlq.ReasonRetriesExhausted
	if !res.Retryable {
		reason = dlq.ReasonNonRetryable
	}
	c.deadLetter(ctx, sub, d, env, r, reason, code, herr.Error(), log)
}

func (c *Consumer) deadLetterDecode(ctx context.Context, sub transport.Subscription, d *transport.Delivery,
	env *envelopepb.Envelope, r *route, err error, log *slog.Logger) {
	c.deadLetter(ctx, sub, d, env, r, dlq.ReasonDecode, CodeDecode, err.Error(), log)
}

func (c *Consumer) deadLetter(ctx context.Context, sub transport.Subscription, d *transport.Delivery,
	env *envelopepb.Envelope, r *route, reason dlq.Reason, code int32, msg string, log *slog.Logger) {
	now := c.cfg.Now()
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
		if reason != dlq.ReasonDecode && reason != dlq.ReasonNoHandler {
			rec.Attempts = int(env.GetRetryCount()) + 1
		}
	}
	if err := sub.DeadLetter(ctx, d, rec); err != nil {
		log.Error("msgcontract: dead-letter failed; the delivery will come back", "err", err)
		return
	}
	c.cfg.Metrics.IncDeadLettered(handler, rec.EventType)
	// A dead letter is an outcome the contract foresees (a poison message,
	// a non-retryable code, retries spent), kept for a human in the dlq
	// store and counted by the metrics: a warning with a short reason,
	// the record holds the whole error.
	log.Warn("msgcontract: dead-lettered", "reason", string(reason), "code", code, "attempts", rec.Attempts,
		"err", logLine(rec.Error))
}

// infraFailure hands a delivery back when the database failed: the
// message is not at fault, so no retry is counted.
func (c *Consumer) infraFailure(ctx context.Context, sub transport.Subscription, d *transport.Delivery,
	step string, err error, log *slog.Logger) {
	log.Error("msgcontract: database failure, message handed back", "step", step, "err", err,
		"delay", c.cfg.InfraRetryDelay)
	if derr := sub.Defer(ctx, d, c.cfg.Now().Add(c.cfg.InfraRetryDelay)); derr != nil {
		log.Error("msgcontract: defer failed", "err", derr)
	}
}

func (c *Consumer) ack(ctx context.Context, sub transport.Subscription, d *transport.Delivery, log *slog.Logger) {
	if err := sub.Ack(ctx, d); err != nil {
		log.Error("msgcontract: ack failed; the delivery will come back and be deduplicated", "err", err)
	}
}

// prefiltered settles a delivery the prefilter knows as committed: counted
// deduplicated (and a key conflict if the payload differs), acknowledged.
// Any prefilter error falls through to the database.
func (c *Consumer) prefiltered(ctx context.Context, sub transport.Subscription, it *item) bool {
	if c.cfg.Prefilter == nil {
		return false
	}
	prior, hash, found, err := c.cfg.Prefilter.Lookup(ctx, it.env.GetBizKey(), it.r.name)
	if err != nil {
		it.log.Warn("msgcontract: prefilter lookup failed; asking the database", "err", err)
		return false
	}
	if !found {
		return false
	}
	et := it.env.GetEventType()
	c.cfg.Metrics.IncDeduped(it.r.name, et)
	if hash != dedup.HashPayload(it.env.GetPayload()) {
		c.cfg.Metrics.IncKeyConflict(it.r.name, et)
		it.log.Warn("msgcontract: key conflict: a duplicate biz_key carries a different payload (producer bug); deduplicated",
			"prior_message_id", prior)
	}
	c.ack(ctx, sub, it.d, it.log)
	return true
}

// record tells the prefilter that env's claim is committed.
func (c *Consumer) record(ctx context.Context, env *envelopepb.Envelope, r *route, messageID string, log *slog.Logger) {
	if c.cfg.Prefilter == nil {
		return
	}
	if err := c.cfg.Prefilter.Record(ctx, env.GetBizKey(), r.name, messageID, dedup.HashPayload(env.GetPayload())); err != nil {
		log.Warn("msgcontract: prefilter record failed", "err", err)
	}
}
