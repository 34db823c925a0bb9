package consumer

import (
	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
)

// The decision step: what becomes of a delivery once its outcome is known,
// a pure function of that outcome and the contract's retry policy. Each
// rule the consumer settles a delivery by lives here once; the consumer
// does the rest (the claim, the handler, acknowledging, recording a
// conflict, publishing a retry or a dead letter). It is the shape of
// runtime-java's Decision and runtime-python's admit and failed, and the
// conformance suite's decision vectors run through it.

// AttemptKind is what happened to a delivery.
type AttemptKind int

const (
	// Handled: the claim won and the handler succeeded.
	Handled AttemptKind = iota + 1
	// Duplicate: the key was claimed already, with the same payload.
	Duplicate
	// Conflict: the key was claimed already, by a message with another
	// payload (a producer bug; the first message won).
	Conflict
	// Failed: the handler failed; its writes and claim were rolled back.
	Failed
	// Undecodable: the envelope or the payload did not decode.
	Undecodable
	// NoHandler: no handler is registered for the message's event type
	// on its topic.
	NoHandler
)

// Attempt is what one delivery attempt came to, as far as its decision needs it.
type Attempt struct {
	Kind AttemptKind
	// Class and Code are a Failed handler's error: the contract's
	// classification of it (classify.Rules.Err) and its code, 0 when it
	// has none.
	Class classify.Classification
	Code  int32
	// RetryCount is the envelope's retry_count: the attempts that failed
	// before this one.
	RetryCount int
	// Chain is the message's retry-chain row (dedup.Store.ChainRow), when
	// one was read: nil when there is none, or the transport's retry
	// cannot fork. Pos is the copy's place in the chain.
	Chain *dedup.ChainPos
	Pos   dedup.ChainPos
}

// Action is what the transport does with a delivery.
type Action int

const (
	// ActAck acknowledges the delivery.
	ActAck Action = iota + 1
	// ActRetry publishes the retry copy (retry_count NextRetry, not_before
	// DelayMs from now), then acknowledges.
	ActRetry
	// ActDeadLetter moves the delivery to the dead-letter store.
	ActDeadLetter
)

// Decision is what to do with a delivery. (Deferring a delivery that is
// not yet due comes before any outcome: the consumer's step 2.)
type Decision struct {
	Action Action
	// Deduplicated (ActAck): the handler did not run, or its run does not
	// count: a duplicate, a key conflict, a superseded copy.
	Deduplicated bool
	// RecordConflict (ActAck): the key conflict is recorded
	// (dedup.Store.RecordConflict) in the transaction that acknowledges.
	RecordConflict bool
	// Superseded (ActAck): another copy of the message went on past this
	// one in its retry chain (dedup.Superseded).
	Superseded bool
	// NextRetry and DelayMs (ActRetry): the retry copy's retry_count and
	// its backoff delay.
	NextRetry int
	DelayMs   int64
	// Reason and Code (ActDeadLetter): why, and the failure's code.
	Reason dlq.Reason
	Code   int32
	// Attempts (ActDeadLetter): how many times the handler ran, 0 when it
	// never did.
	Attempts int
}

// Decide maps o to its decision under the retry policy p; u is the backoff
// jitter sample, uniform in [0,1).
//
//   - A copy whose chain row supersedes it (dedup.Superseded) is
//     acknowledged as deduplicated: a retry copy or a replay before its
//     handler runs (a first delivery is not looked up), any copy when its
//     handler failed. It goes no further: the copy that went on carries
//     the message.
//   - Handled: acknowledged. Duplicate: acknowledged as deduplicated.
//     Conflict: the same, with the conflict recorded.
//   - Failed: retry n = retry_count+1 when the classification is
//     retryable and p allows n (backoff.Policy.DeadLetter), after
//     p.Delay(n, u); otherwise dead-lettered, retries_exhausted or
//     non_retryable, after n attempts.
//   - Undecodable and NoHandler: dead-lettered at once (decode,
//     no_handler), never retried, no attempt counted.
func Decide(o Attempt, p backoff.Policy, u float64) Decision {
	switch o.Kind {
	case Undecodable:
		return Decision{Action: ActDeadLetter, Reason: dlq.ReasonDecode, Code: CodeDecode}
	case NoHandler:
		return Decision{Action: ActDeadLetter, Reason: dlq.ReasonNoHandler, Code: CodeNoHandler}
	}
	lookedUp := o.Kind == Failed || o.Pos.Continues()
	if o.Chain != nil && lookedUp && dedup.Superseded(*o.Chain, o.Pos) {
		return Decision{Action: ActAck, Deduplicated: true, Superseded: true}
	}
	switch o.Kind {
	case Handled:
		return Decision{Action: ActAck}
	case Duplicate:
		return Decision{Action: ActAck, Deduplicated: true}
	case Conflict:
		return Decision{Action: ActAck, Deduplicated: true, RecordConflict: true}
	}
	next := o.RetryCount + 1
	if o.Class.Retryable && !p.DeadLetter(next) {
		return Decision{Action: ActRetry, NextRetry: next, DelayMs: p.Delay(next, u)}
	}
	reason := dlq.ReasonRetriesExhausted
	if !o.Class.Retryable {
		reason = dlq.ReasonNonRetryable
	}
	return Decision{Action: ActDeadLetter, Reason: reason, Code: o.Code, Attempts: next}
}
