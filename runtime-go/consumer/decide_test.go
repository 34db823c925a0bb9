package consumer_test

import (
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	p := backoff.Policy{BaseMs: 1000, Multiplier: 2, JitterMs: 1000, MaxDelayMs: 5000, MaxRetries: 3}
	retryable := classify.Classification{Retryable: true, Range: "system"}
	rejected := classify.Classification{Retryable: false, Range: "business"}
	row := func(replay, attempt int, id string) *dedup.ChainPos {
		return &dedup.ChainPos{ReplayCount: replay, Attempt: attempt, DeliveryID: id}
	}
	ack := consumer.Decision{Action: consumer.ActAck}
	dup := consumer.Decision{Action: consumer.ActAck, Deduplicated: true}
	superseded := consumer.Decision{Action: consumer.ActAck, Deduplicated: true, Superseded: true}
	for _, tc := range []struct {
		name string
		o    consumer.Attempt
		u    float64
		want consumer.Decision
	}{
		{"handled", consumer.Attempt{Kind: consumer.Handled}, 0, ack},
		{"duplicate", consumer.Attempt{Kind: consumer.Duplicate}, 0, dup},
		{"conflict", consumer.Attempt{Kind: consumer.Conflict}, 0,
			consumer.Decision{Action: consumer.ActAck, Deduplicated: true, RecordConflict: true}},
		{"first failure retried", consumer.Attempt{Kind: consumer.Failed, Class: retryable, Code: 50001}, 0.5,
			consumer.Decision{Action: consumer.ActRetry, NextRetry: 1, DelayMs: 1500}},
		{"third retry capped", consumer.Attempt{Kind: consumer.Failed, Class: retryable, RetryCount: 2}, 0,
			consumer.Decision{Action: consumer.ActRetry, NextRetry: 3, DelayMs: 4000}},
		{"retries exhausted", consumer.Attempt{Kind: consumer.Failed, Class: retryable, Code: 50001, RetryCount: 3}, 0.5,
			consumer.Decision{Action: consumer.ActDeadLetter, Reason: dlq.ReasonRetriesExhausted, Code: 50001, Attempts: 4}},
		{"non-retryable", consumer.Attempt{Kind: consumer.Failed, Class: rejected, Code: 40001, RetryCount: 1}, 0,
			consumer.Decision{Action: consumer.ActDeadLetter, Reason: dlq.ReasonNonRetryable, Code: 40001, Attempts: 2}},
		{"undecodable", consumer.Attempt{Kind: consumer.Undecodable, RetryCount: 2}, 0,
			consumer.Decision{Action: consumer.ActDeadLetter, Reason: dlq.ReasonDecode, Code: consumer.CodeDecode}},
		{"no handler", consumer.Attempt{Kind: consumer.NoHandler}, 0,
			consumer.Decision{Action: consumer.ActDeadLetter, Reason: dlq.ReasonNoHandler, Code: consumer.CodeNoHandler}},
		// The retry chain (dedup.Superseded).
		{"retry copy behind its chain", consumer.Attempt{Kind: consumer.Handled, RetryCount: 1,
			Chain: row(0, 2, "t/0/9"), Pos: dedup.ChainPos{Attempt: 1, DeliveryID: "t/0/5"}}, 0, superseded},
		{"second copy of an attempt", consumer.Attempt{Kind: consumer.Failed, Class: retryable, RetryCount: 1,
			Chain: row(0, 1, "t/0/9"), Pos: dedup.ChainPos{Attempt: 1, DeliveryID: "t/0/5"}}, 0, superseded},
		{"the copy that went on, redelivered", consumer.Attempt{Kind: consumer.Failed, Class: retryable, RetryCount: 1,
			Chain: row(0, 1, "t/0/9"), Pos: dedup.ChainPos{Attempt: 1, DeliveryID: "t/0/9"}}, 0,
			consumer.Decision{Action: consumer.ActRetry, NextRetry: 2, DelayMs: 2000}},
		{"a replay starts afresh", consumer.Attempt{Kind: consumer.Handled,
			Chain: row(0, 3, "t/0/9"), Pos: dedup.ChainPos{ReplayCount: 1, DeliveryID: "t/0/12"}}, 0, ack},
		{"a first delivery is not looked up", consumer.Attempt{Kind: consumer.Handled,
			Chain: row(0, 2, "t/0/9"), Pos: dedup.ChainPos{DeliveryID: "t/0/1"}}, 0, ack},
		{"a first delivery's failure is", consumer.Attempt{Kind: consumer.Failed, Class: retryable,
			Chain: row(0, 0, "t/0/9"), Pos: dedup.ChainPos{DeliveryID: "t/0/1"}}, 0, superseded},
	} {
		if got := consumer.Decide(tc.o, p, tc.u); got != tc.want {
			t.Errorf("%s: Decide = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
