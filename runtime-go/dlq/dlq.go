// Package dlq describes dead-letter records and the operations tooling
// performs on a transport's dead-letter destination: list, show, replay
// and purge (`msgcontract dlq ...`).
package dlq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// Reason says why a message was dead-lettered. The set is closed.
type Reason string

const (
	// ReasonDecode: the envelope or payload did not decode. Never retried.
	ReasonDecode Reason = "decode"
	// ReasonNonRetryable: the handler failed with a non-retryable error.
	ReasonNonRetryable Reason = "non_retryable"
	// ReasonRetriesExhausted: the handler failed with a retryable error
	// after max_retries retries.
	ReasonRetriesExhausted Reason = "retries_exhausted"
	// ReasonNoHandler: no handler is registered for the event type on the
	// topic the message arrived on.
	ReasonNoHandler Reason = "no_handler"
	// ReasonSchema: the record's Confluent schema id does not belong to
	// the event's subject, the registry refused the id, or the framed
	// record carries no msgcontract envelope header (Kafka with
	// Config.Confluent). Never retried.
	ReasonSchema Reason = "schema"
)

// Record is one dead-lettered message.
// Its JSON form (used by the NATS dead-letter stream and tooling) has
// snake_case names; Envelope is base64.
type Record struct {
	// ID is the dead-letter destination's id of the record.
	ID string `json:"id,omitempty"`
	// Topic the message was published to; replay returns it there.
	Topic string `json:"topic"`
	// Group is the subscription group that gave up on it.
	Group string `json:"group"`
	// Handler is the handler name; empty for decode failures.
	Handler string `json:"handler"`
	// EventType, BizKey and MessageID are copied from the envelope when it
	// decoded.
	EventType string `json:"event_type"`
	BizKey    string `json:"biz_key"`
	MessageID string `json:"message_id"`
	// Envelope is the envelope exactly as it was delivered the last time,
	// byte for byte; its payload is the producer's, untouched.
	Envelope []byte `json:"envelope"`
	Reason   Reason `json:"reason"`
	// Code is the error code of the last failure; 0 when it had none.
	Code int32 `json:"code"`
	// Error is the last failure's message, bounded in size.
	Error string `json:"error"`
	// Attempts is how many times the handler ran (retry_count + 1); 0
	// for decode failures.
	Attempts int `json:"attempts"`
	// FirstFailedAt and LastFailedAt bracket the failures.
	FirstFailedAt time.Time `json:"first_failed_at,omitzero"`
	LastFailedAt  time.Time `json:"last_failed_at,omitzero"`
	// DeadAt is when the record was written.
	DeadAt time.Time `json:"dead_at,omitzero"`
	// ReplayCount counts replays; LastReplayedAt is zero when never
	// replayed. Replayed records are kept as history until purged. A
	// time never set is left out of the JSON form.
	ReplayCount    int       `json:"replay_count"`
	LastReplayedAt time.Time `json:"last_replayed_at,omitzero"`
}

// Filter selects records. Zero fields match everything.
type Filter struct {
	Topic, Group, Handler, EventType, BizKey string
	Reason                                   Reason
	// IDs restricts to these record ids.
	IDs []string
	// OnlyReplayed / ExcludeReplayed select by replay state.
	OnlyReplayed, ExcludeReplayed bool
	// Limit caps List's result, oldest records first; 0 (or negative)
	// means DefaultLimit. Purge ignores it and deletes every match.
	Limit int
}

// DefaultLimit is how many records List returns when Filter.Limit is 0.
const DefaultLimit = 100

// Matches reports whether r passes f's conditions (Limit aside), for
// stores that filter in Go rather than in a query.
func (f Filter) Matches(r *Record) bool {
	eq := func(want, got string) bool { return want == "" || want == got }
	return eq(f.Topic, r.Topic) && eq(f.Group, r.Group) && eq(f.Handler, r.Handler) &&
		eq(f.EventType, r.EventType) && eq(f.BizKey, r.BizKey) && eq(string(f.Reason), string(r.Reason)) &&
		(len(f.IDs) == 0 || slices.Contains(f.IDs, r.ID)) &&
		(!f.OnlyReplayed || r.ReplayCount > 0) && (!f.ExcludeReplayed || r.ReplayCount == 0)
}

// Store is a transport's dead-letter destination as tooling sees it.
type Store interface {
	// List returns matching records, oldest first.
	List(ctx context.Context, f Filter) ([]Record, error)
	// Get returns one record, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (*Record, error)
	// Replay re-publishes the record's envelope to its original topic for
	// its group, with retry_count and not_before reset and last_error and
	// first_failed_at kept, and marks the record replayed. The record
	// stays until purged.
	Replay(ctx context.Context, id string) error
	// Purge deletes matching records and returns how many it deleted.
	Purge(ctx context.Context, f Filter) (int, error)
}

// ErrNotFound is wrapped by Get and Replay for an unknown id.
var ErrNotFound = errors.New("dlq: record not found")

// ReplayEnvelope returns r's envelope as a replay delivers it again:
// retry_count and not_before reset, replay_count one higher (a new retry
// chain, which consumers must not take for a stale copy of the old one),
// everything else as it was dead-lettered, decoded and encoded. Every store's Replay starts here. An
// envelope that does not decode has nothing to deliver: fix the producer
// and purge the record.
func ReplayEnvelope(r *Record) (env *envelopepb.Envelope, body []byte, err error) {
	env, err = envelope.Unmarshal(r.Envelope)
	if err != nil {
		return nil, nil, fmt.Errorf("dlq replay %s: the envelope does not decode, fix the producer and purge it: %w", r.ID, err)
	}
	env.RetryCount, env.NotBefore = 0, 0
	env.ReplayCount++
	body, err = envelope.Marshal(env)
	if err != nil {
		return nil, nil, fmt.Errorf("dlq replay %s: %w", r.ID, err)
	}
	return env, body, nil
}
