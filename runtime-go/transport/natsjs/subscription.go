package natsjs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Subscribe creates or updates group's durable pull consumer on topics and
// on the group's retry subjects. A new consumer starts with the oldest
// message still in the stream.
func (t *Transport) Subscribe(ctx context.Context, group string, topics []string) (transport.Subscription, error) {
	if group == "" || len(topics) == 0 {
		return nil, errors.New("natsjs: Subscribe needs a group and at least one topic")
	}
	var filters []string
	for _, tp := range topics {
		filters = append(filters, t.topicPfx+tp, t.retrySubject(group, tp))
	}
	c, err := t.msgs.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable: consumerName(group), FilterSubjects: filters,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: t.cfg.AckWait, MaxDeliver: -1,
		DeliverPolicy: jetstream.DeliverAllPolicy, MaxAckPending: 10_000,
	})
	if err != nil {
		return nil, fmt.Errorf("natsjs: consumer %s: %w", group, err)
	}
	return &subscription{t: t, group: group, c: c}, nil
}

func (t *Transport) retrySubject(group, topic string) string {
	return t.retryPfx + consumerName(group) + "." + topic
}

// RetryMayFork: Retry and DeadLetter publish, then acknowledge; an ack
// lost to a crash redelivers the message after AckWait.
func (s *subscription) RetryMayFork() {}

type subscription struct {
	t     *Transport
	group string
	c     jetstream.Consumer
}

// Fetch pulls up to n messages, waiting until one arrives or ctx ends. It
// returns what the stream holds at once (a no-wait pull); only when that
// is nothing does it wait, for one message, then adds what arrived with
// it. A pull for n that waits would return only when n messages came or
// FetchWait ran out: under light load every message would wait up to
// FetchWait.
func (s *subscription) Fetch(ctx context.Context, n int) ([]*transport.Delivery, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ds, err := s.pull(s.c.FetchNoWait(n))
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil || len(ds) > 0 {
			return ds, err
		}
		wait := s.t.cfg.FetchWait
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			wait = max(time.Until(dl), time.Millisecond)
		}
		if ds, err = s.pull(s.c.Fetch(1, jetstream.FetchMaxWait(wait))); len(ds) == 0 {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		if n > 1 {
			more, err := s.pull(s.c.FetchNoWait(n - 1))
			if err != nil {
				// The first is leased already: hand it out, the rest
				// comes with the next fetch.
				return ds, nil
			}
			ds = append(ds, more...)
		}
		return ds, nil
	}
}

// pull drains one pull request's messages.
func (s *subscription) pull(batch jetstream.MessageBatch, err error) ([]*transport.Delivery, error) {
	if err != nil {
		return nil, fmt.Errorf("natsjs: fetch: %w", err)
	}
	var ds []*transport.Delivery
	for m := range batch.Messages() {
		ds = append(ds, s.delivery(m))
	}
	if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && len(ds) == 0 {
		return nil, fmt.Errorf("natsjs: fetch: %w", err)
	}
	return ds, nil
}

func (s *subscription) delivery(m jetstream.Msg) *transport.Delivery {
	d := &transport.Delivery{ID: m.Headers().Get("Nats-Msg-Id"), Body: m.Data(), Handle: m}
	subj := m.Subject()
	switch {
	case strings.HasPrefix(subj, s.t.topicPfx):
		d.Topic = strings.TrimPrefix(subj, s.t.topicPfx)
	case strings.HasPrefix(subj, s.t.retryPfx):
		rest := strings.TrimPrefix(subj, s.t.retryPfx)
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			d.Topic = rest[i+1:]
		}
	}
	if md, err := m.Metadata(); err == nil {
		d.Attempt = int(md.NumDelivered)
		d.Offset = int64(md.Sequence.Stream)
	}
	return d
}

func msgOf(d *transport.Delivery) jetstream.Msg { return d.Handle.(jetstream.Msg) }

// Ack acknowledges deliveries.
func (s *subscription) Ack(ctx context.Context, ds ...*transport.Delivery) error {
	var errs []error
	for _, d := range ds {
		if err := msgOf(d).Ack(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Defer naks d with the delay until until.
func (s *subscription) Defer(ctx context.Context, d *transport.Delivery, until time.Time) error {
	delay := until.Sub(s.t.cfg.Now())
	if delay < 0 {
		delay = 0
	}
	return msgOf(d).NakWithDelay(delay)
}

// Retry publishes env on the group's retry subject under a fresh id, then
// acknowledges d. A crash between the two leaves a second copy; the
// consumer's dedup absorbs it.
func (s *subscription) Retry(ctx context.Context, d *transport.Delivery, env *envelopepb.Envelope) error {
	body, err := envelope.Marshal(env)
	if err != nil {
		return err
	}
	topic := d.Topic // where this group receives it
	if topic == "" {
		topic = env.GetTopic()
	}
	if err := s.t.publishRaw(ctx, s.t.retrySubject(s.group, topic), body); err != nil {
		return err
	}
	return msgOf(d).Ack()
}

// DeadLetter stores rec in the dead-letter stream, then acknowledges d.
func (s *subscription) DeadLetter(ctx context.Context, d *transport.Delivery, rec *dlq.Record) error {
	if err := s.t.publishJSON(ctx, s.t.dlqSubject(rec), rec); err != nil {
		return err
	}
	return msgOf(d).Ack()
}

func (t *Transport) dlqSubject(rec *dlq.Record) string {
	topic := rec.Topic
	if topic == "" {
		topic = "_"
	}
	return t.dlqPfx + consumerName(rec.Group) + "." + topic
}

// Close does nothing: unacknowledged messages are redelivered after
// AckWait.
func (s *subscription) Close() error { return nil }

var _ transport.Extender = (*subscription)(nil)

// Lease implements transport.Extender: the consumer's AckWait.
func (s *subscription) Lease() time.Duration { return s.t.cfg.AckWait }

// Extend implements transport.Extender with an in-progress ack.
func (s *subscription) Extend(ctx context.Context, ds ...*transport.Delivery) error {
	var errs []error
	for _, d := range ds {
		if err := msgOf(d).InProgress(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
