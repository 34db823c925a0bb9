// Package natsjs is the NATS JetStream transport.
//
// Subjects: a topic T is published on "<prefix>.topic.T"; retries of group
// G go to "<prefix>.retry.G.T", which only G's durable consumer reads, so
// a retry never reaches another group; all of them are in one stream.
// Dead-letter records (JSON dlq.Record) go to "<prefix>-dlq.G.T" in a
// second stream. Every publish carries a fresh Nats-Msg-Id, so JetStream's
// duplicate window never drops a retry or a replay. A message that is not
// due yet is handed back with NakWithDelay.
package natsjs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Config configures a Transport. Conn is required.
type Config struct {
	// Conn is a connected NATS client.
	Conn *nats.Conn
	// Stream is the name of the message stream; the dead-letter stream is
	// Stream + "_DLQ". Defaults to "MSGCONTRACT".
	Stream string
	// SubjectPrefix defaults to "msgcontract".
	SubjectPrefix string
	// MaxAge bounds how long messages stay in the streams. Defaults to 7
	// days.
	MaxAge time.Duration
	// Replicas of the streams. Defaults to 1.
	Replicas int
	// AckWait is the lease: a fetched message not settled within it is
	// redelivered. Defaults to 60 s; keep it above the consumer's
	// HandlerTimeout.
	AckWait time.Duration
	// FetchWait is how long one fetch request waits for messages before
	// asking again. Defaults to 1 s.
	FetchWait time.Duration
	// Now is the clock used to turn not_before into a delay. Defaults to
	// time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	if c.Stream == "" {
		c.Stream = "MSGCONTRACT"
	}
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = "msgcontract"
	}
	if c.MaxAge == 0 {
		c.MaxAge = 7 * 24 * time.Hour
	}
	if c.Replicas == 0 {
		c.Replicas = 1
	}
	if c.AckWait == 0 {
		c.AckWait = 60 * time.Second
	}
	if c.FetchWait == 0 {
		c.FetchWait = time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate reports every missing or invalid field at once.
func (c *Config) Validate() error {
	var errs []error
	if c.Conn == nil {
		errs = append(errs, errors.New("natsjs: Config.Conn is required"))
	}
	if strings.ContainsAny(c.SubjectPrefix, ".*> ") {
		errs = append(errs, fmt.Errorf("natsjs: SubjectPrefix %q must be one subject token", c.SubjectPrefix))
	}
	return errors.Join(errs...)
}

// Transport is the JetStream transport: a transport.Publisher, a
// transport.Subscriber and a dlq.Store.
type Transport struct {
	cfg      Config
	js       jetstream.JetStream
	msgs     jetstream.Stream
	dead     jetstream.Stream
	dlqPfx   string
	topicPfx string
	retryPfx string
}

// New validates cfg, creates or updates the two streams and returns the
// Transport.
func New(ctx context.Context, cfg Config) (*Transport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	js, err := jetstream.New(cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("natsjs: %w", err)
	}
	p := cfg.SubjectPrefix
	t := &Transport{cfg: cfg, js: js, topicPfx: p + ".topic.", retryPfx: p + ".retry.", dlqPfx: p + "-dlq."}
	t.msgs, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: cfg.Stream, Subjects: []string{p + ".>"}, Storage: jetstream.FileStorage,
		MaxAge: cfg.MaxAge, Replicas: cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("natsjs: stream %s: %w", cfg.Stream, err)
	}
	t.dead, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: cfg.Stream + "_DLQ", Subjects: []string{p + "-dlq.>"}, Storage: jetstream.FileStorage,
		Replicas: cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("natsjs: stream %s_DLQ: %w", cfg.Stream, err)
	}
	return t, nil
}

// Publish publishes env on topic's subject with a fresh Nats-Msg-Id.
func (t *Transport) Publish(ctx context.Context, topic string, env *envelopepb.Envelope) error {
	body, err := envelope.Marshal(env)
	if err != nil {
		return fmt.Errorf("natsjs: publish: %w", err)
	}
	return t.publishRaw(ctx, t.topicPfx+topic, body)
}

// PublishBatch publishes envs to topic in order without waiting for each
// acknowledgement before sending the next (JetStream's asynchronous
// publish on the one connection), then waits for all of them. It stops
// sending at the first envelope the client refuses (too large, the
// connection gone), so no envelope after a refused one goes out; it
// fails when any acknowledgement fails. The outbox relay hands it each
// run of one topic's rows: a round trip per pass instead of per row.
func (t *Transport) PublishBatch(ctx context.Context, topic string, envs []*envelopepb.Envelope) error {
	subject := t.topicPfx + topic
	futures := make([]jetstream.PubAckFuture, 0, len(envs))
	var refused error
	for _, env := range envs {
		body, err := envelope.Marshal(env)
		if err == nil {
			var f jetstream.PubAckFuture
			if f, err = t.js.PublishAsync(subject, body, jetstream.WithMsgID(event.NewMessageID())); err == nil {
				futures = append(futures, f)
				continue
			}
		}
		refused = fmt.Errorf("natsjs: publish %s: %w", subject, err)
		break
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("natsjs: publish %s: %w", subject, err)
		case <-ctx.Done():
			return fmt.Errorf("natsjs: publish %s: %w", subject, ctx.Err())
		}
	}
	return refused
}

// PublishRaw publishes already encoded bytes on topic's subject.
func (t *Transport) PublishRaw(ctx context.Context, topic string, body []byte) error {
	return t.publishRaw(ctx, t.topicPfx+topic, body)
}

func (t *Transport) publishRaw(ctx context.Context, subject string, body []byte) error {
	if _, err := t.js.Publish(ctx, subject, body, jetstream.WithMsgID(event.NewMessageID())); err != nil {
		return fmt.Errorf("natsjs: publish %s: %w", subject, err)
	}
	return nil
}

func (t *Transport) publishJSON(ctx context.Context, subject string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return t.publishRaw(ctx, subject, body)
}

// Backlog counts group's messages not yet acknowledged: waiting, in
// flight or delayed. It is never 0 while a message published before the
// call is unsettled; the count of waiting messages can trail for a
// moment after a publish (it then reads at least 1).
func (t *Transport) Backlog(ctx context.Context, group string) (int, error) {
	c, err := t.msgs.Consumer(ctx, consumerName(group))
	if err != nil {
		return 0, err
	}
	info, err := c.Info(ctx)
	if err != nil {
		return 0, err
	}
	pending := int(info.NumPending)
	if pending == 0 {
		// The server adds a stored message to its consumers' NumPending
		// asynchronously, after it has acknowledged the publish: right
		// after a publish (a retry, a replay) NumPending can still read 0.
		// A filter subject whose last message lies beyond what the
		// consumer has delivered proves that one is waiting.
		waiting, err := t.undelivered(ctx, info)
		if err != nil {
			return 0, fmt.Errorf("natsjs: backlog of %s: %w", group, err)
		}
		if waiting {
			pending = 1
		}
	}
	return pending + info.NumAckPending, nil
}

// undelivered reports whether the stream holds a message on one of the
// consumer's filter subjects that it has not delivered yet.
func (t *Transport) undelivered(ctx context.Context, info *jetstream.ConsumerInfo) (bool, error) {
	for _, subject := range info.Config.FilterSubjects {
		msg, err := t.msgs.GetLastMsgForSubject(ctx, subject)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("last message on %s: %w", subject, err)
		}
		if msg.Sequence > info.Delivered.Stream {
			return true, nil
		}
	}
	return false, nil
}

var _ transport.Backlog = (*Transport)(nil)

// consumerName maps a group to a durable consumer name (no dots or
// wildcards allowed there).
func consumerName(group string) string {
	return strings.NewReplacer(".", "_", "*", "_", ">", "_", " ", "_").Replace(group)
}
