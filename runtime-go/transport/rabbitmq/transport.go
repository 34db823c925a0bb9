package rabbitmq

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// AMQP message properties and headers of the wire format (see the package
// doc).
const (
	// ContentType of every message carrying an envelope.
	ContentType = "application/x-protobuf; messageType=msgcontract.v1.Envelope"
	// HeaderTopic is the topic the message was published to.
	HeaderTopic = "x-msgcontract-topic"
	// HeaderNotBefore is the time, in milliseconds since the Unix epoch
	// (a signed 64-bit integer), before which the message must not be
	// handled: set on retry copies and deferred copies.
	HeaderNotBefore = "x-msgcontract-not-before"
	// HeaderDLQGroup is the group of a dead-letter record.
	HeaderDLQGroup = "x-msgcontract-group"
	// headerCC is RabbitMQ's sender-selected distribution header; dead
	// lettering routes by it too.
	headerCC = "CC"
	// headerDeliveryCount is set by quorum queues on redeliveries.
	headerDeliveryCount = "x-delivery-count"
)

// Transport is the RabbitMQ transport: a transport.Publisher, a
// transport.Subscriber and a dlq.Store.
type Transport struct {
	cfg Config
	n   names

	connMu  sync.Mutex
	conn    *amqp.Connection // redialled when it closed
	closed  bool
	blocked string // why the broker blocks the connection's publishers; "" when it does not

	pubMu sync.Mutex
	pubCh *amqp.Channel // confirm mode

	adminMu  sync.Mutex
	adminCh  *amqp.Channel // declarations; a failed one closes it
	declared sync.Map      // queue name -> struct{}

	subsMu sync.Mutex
	subs   map[*subscription]struct{}
}

var (
	_ transport.Publisher  = (*Transport)(nil)
	_ transport.Subscriber = (*Transport)(nil)
	_ transport.Backlog    = (*Transport)(nil)
)

// New validates cfg, connects, declares the exchanges, the dead-letter
// queue and the queues of cfg.Topology, and returns the Transport.
func New(ctx context.Context, cfg Config) (*Transport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	var conn *amqp.Connection
	err := untilUp(ctx, func() (err error) {
		conn, err = dial(cfg)
		return err
	})
	if err != nil {
		return nil, err
	}
	t := &Transport{cfg: cfg, n: names{cfg.Prefix}, subs: map[*subscription]struct{}{}}
	t.watch(conn)
	err = untilUp(ctx, func() error {
		if err := t.declareBase(ctx); err != nil {
			return err
		}
		for topic, groups := range cfg.Topology {
			for _, g := range groups {
				if err := t.declareGroup(ctx, g, topic); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// untilUp runs fn until it succeeds, fails for a reason that trying again
// cannot fix (permanent), or ctx ends, pausing 100 ms, doubling up to 2 s,
// between tries. It is how New and Subscribe wait out a broker that is
// restarting: a connection refused or reset, a channel or connection
// closed under them. The last error is returned.
func untilUp(ctx context.Context, fn func() error) error {
	pause := 100 * time.Millisecond
	for {
		err := fn()
		if err == nil || permanent(err) {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// permanent reports whether err is the broker refusing the request
// itself (wrong credentials or vhost, a declaration whose arguments
// differ from the existing queue's, an invalid name), which no retry
// fixes.
func permanent(err error) bool {
	if errors.Is(err, transport.ErrClosed) {
		return true
	}
	var ae *amqp.Error
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.Code {
	case amqp.AccessRefused, amqp.PreconditionFailed, amqp.NotAllowed, amqp.InvalidPath,
		amqp.NotImplemented, amqp.CommandInvalid, amqp.SyntaxError, amqp.NotFound:
		return true
	}
	return false
}

func dial(cfg Config) (*amqp.Connection, error) {
	conn, err := amqp.DialConfig(cfg.URL, amqp.Config{Dial: amqp.DefaultDial(cfg.ConnectTimeout),
		Properties: amqp.Table{"connection_name": "msgcontract runtime-go"}})
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: connect to %s: %w (is the broker up and the URL's user allowed in?)", redact(cfg.URL), err)
	}
	return conn, nil
}

// channel opens a channel, dialling the broker again when the connection
// closed (a broker restart, a network failure): every later call tries
// once more, so a transport outlives its broker's restarts.
func (t *Transport) channel() (*amqp.Channel, error) {
	t.connMu.Lock()
	defer t.connMu.Unlock()
	if t.closed {
		return nil, transport.ErrClosed
	}
	if t.conn.IsClosed() {
		conn, err := dial(t.cfg)
		if err != nil {
			return nil, err
		}
		t.watch(conn)
	}
	ch, err := t.conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("rabbitmq: open a channel on %s: %w", redact(t.cfg.URL), err)
	}
	return ch, nil
}

// watch makes conn the connection and follows the broker's
// connection.blocked and unblocked notices on it (t.connMu held or t not
// shared yet).
func (t *Transport) watch(conn *amqp.Connection) {
	t.conn, t.blocked = conn, ""
	notices := conn.NotifyBlocked(make(chan amqp.Blocking, 4))
	go func() {
		for b := range notices {
			t.connMu.Lock()
			if t.conn == conn {
				t.blocked = ""
				if b.Active {
					t.blocked = b.Reason
					if t.blocked == "" {
						t.blocked = "no reason given"
					}
				}
			}
			t.connMu.Unlock()
		}
	}()
}

// blockedErr is an error when the broker blocks publishers (a memory or
// disk alarm): a publish would wait for the alarm to clear.
func (t *Transport) blockedErr() error {
	t.connMu.Lock()
	defer t.connMu.Unlock()
	if t.blocked == "" {
		return nil
	}
	return fmt.Errorf("rabbitmq: the broker at %s blocks publishers (%s): a memory or disk alarm; "+
		"free memory or disk on the broker or raise its vm_memory_high_watermark / disk_free_limit", redact(t.cfg.URL), t.blocked)
}

// Close closes the connection: unacknowledged deliveries go back to their
// queues. It waits at most 5 s for the broker.
func (t *Transport) Close() error {
	t.connMu.Lock()
	defer t.connMu.Unlock()
	t.closed = true
	if err := t.conn.CloseDeadline(time.Now().Add(5 * time.Second)); err != nil && !errors.Is(err, amqp.ErrClosed) {
		return fmt.Errorf("rabbitmq: close: %w", err)
	}
	return nil
}

// admin runs fn on the declaration channel, opening a new one when an
// earlier failure closed it.
func (t *Transport) admin(fn func(ch *amqp.Channel) error) error {
	t.adminMu.Lock()
	defer t.adminMu.Unlock()
	if t.adminCh == nil || t.adminCh.IsClosed() {
		ch, err := t.channel()
		if err != nil {
			return err
		}
		t.adminCh = ch
	}
	return fn(t.adminCh)
}

func quorum(extra amqp.Table) amqp.Table {
	args := amqp.Table{"x-queue-type": "quorum"}
	for k, v := range extra {
		args[k] = v
	}
	return args
}

func (t *Transport) declareBase(_ context.Context) error {
	n := t.n
	return t.admin(func(ch *amqp.Channel) error {
		exchanges := []struct {
			name, kind string
			args       amqp.Table
		}{
			{n.unrouted(), amqp.ExchangeFanout, nil},
			{n.topicExchange(), amqp.ExchangeTopic, amqp.Table{"alternate-exchange": n.unrouted()}},
			{n.retryExchange(), amqp.ExchangeDirect, nil},
			{n.delayExchange(), amqp.ExchangeDirect, nil},
		}
		for _, x := range exchanges {
			if err := ch.ExchangeDeclare(x.name, x.kind, true, false, false, false, x.args); err != nil {
				return fmt.Errorf("rabbitmq: declare exchange %s: %w", x.name, err)
			}
		}
		for _, q := range []string{n.unrouted(), n.dlq()} {
			if _, err := ch.QueueDeclare(q, true, false, false, false, quorum(nil)); err != nil {
				return fmt.Errorf("rabbitmq: declare queue %s: %w", q, err)
			}
		}
		if err := ch.QueueBind(n.unrouted(), "", n.unrouted(), false, nil); err != nil {
			return fmt.Errorf("rabbitmq: bind %s: %w", n.unrouted(), err)
		}
		return nil
	})
}

// declareGroup declares group's queue of topic and binds it to the topic
// exchange (key: topic) and to the retry exchange (key: its name).
func (t *Transport) declareGroup(_ context.Context, group, topic string) error {
	q := t.n.queue(group, topic)
	if _, ok := t.declared.Load(q); ok {
		return nil
	}
	err := t.admin(func(ch *amqp.Channel) error {
		if _, ok := t.declared.Load(q); ok { // declared while this call waited
			return nil
		}
		if _, err := ch.QueueDeclare(q, true, false, false, false, quorum(nil)); err != nil {
			return fmt.Errorf("rabbitmq: declare queue %s: %w", q, err)
		}
		if err := ch.QueueBind(q, topic, t.n.topicExchange(), false, nil); err != nil {
			return fmt.Errorf("rabbitmq: bind %s to %s: %w", q, t.n.topicExchange(), err)
		}
		if err := ch.QueueBind(q, q, t.n.retryExchange(), false, nil); err != nil {
			return fmt.Errorf("rabbitmq: bind %s to %s: %w", q, t.n.retryExchange(), err)
		}
		return nil
	})
	if err == nil {
		t.declared.Store(q, struct{}{})
	}
	return err
}

// declareDelay declares group's delay queue of 2^exp ms: messages expire
// after exactly that TTL and are dead-lettered, at least once, to the
// retry exchange, which routes them by their CC header to the group queue.
func (t *Transport) declareDelay(group string, exp int) (string, error) {
	q := t.n.delayQueue(group, exp)
	if _, ok := t.declared.Load(q); ok {
		return q, nil
	}
	err := t.admin(func(ch *amqp.Channel) error {
		if _, ok := t.declared.Load(q); ok { // declared while this call waited
			return nil
		}
		args := quorum(amqp.Table{
			"x-message-ttl":          int64(1) << exp,
			"x-dead-letter-exchange": t.n.retryExchange(),
			"x-dead-letter-strategy": "at-least-once",
			"x-overflow":             "reject-publish",
		})
		if _, err := ch.QueueDeclare(q, true, false, false, false, args); err != nil {
			return fmt.Errorf("rabbitmq: declare delay queue %s: %w", q, err)
		}
		if err := ch.QueueBind(q, q, t.n.delayExchange(), false, nil); err != nil {
			return fmt.Errorf("rabbitmq: bind %s to %s: %w", q, t.n.delayExchange(), err)
		}
		return nil
	})
	if err == nil {
		t.declared.Store(q, struct{}{})
	}
	return q, err
}

// publish publishes msg and waits for the broker's confirm.
func (t *Transport) publish(ctx context.Context, exchange, key string, msg amqp.Publishing) error {
	ch, err := t.pubChannel()
	if err != nil {
		return err
	}
	msg.DeliveryMode = amqp.Persistent
	if msg.MessageId == "" {
		msg.MessageId = event.NewMessageID()
	}
	if err := t.blockedErr(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.PublishTimeout)
	defer cancel()
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, false, false, msg)
	if err != nil {
		return fmt.Errorf("rabbitmq: publish to exchange %q key %q: %w", exchange, key, err)
	}
	ok, err := dc.WaitContext(ctx)
	if err != nil {
		if berr := t.blockedErr(); berr != nil {
			err = berr
		}
		return fmt.Errorf("rabbitmq: publish to exchange %q key %q: no confirm: %w", exchange, key, err)
	}
	if !ok {
		return fmt.Errorf("rabbitmq: publish to exchange %q key %q: the broker refused it (basic.nack); see its log", exchange, key)
	}
	return nil
}

func (t *Transport) pubChannel() (*amqp.Channel, error) {
	t.pubMu.Lock()
	defer t.pubMu.Unlock()
	if t.pubCh != nil && !t.pubCh.IsClosed() {
		return t.pubCh, nil
	}
	ch, err := t.channel()
	if err != nil {
		return nil, err
	}
	if err := ch.Confirm(false); err != nil {
		ch.Close()
		return nil, fmt.Errorf("rabbitmq: publisher confirms: %w", err)
	}
	t.pubCh = ch
	return ch, nil
}

// Publish publishes env to the topic exchange with routing key topic under
// a fresh message_id, and returns once the broker confirmed it.
func (t *Transport) Publish(ctx context.Context, topic string, env *envelopepb.Envelope) error {
	body, err := envelope.Marshal(env)
	if err != nil {
		return fmt.Errorf("rabbitmq: publish to %s: %w", topic, err)
	}
	return t.publishTopic(ctx, topic, body, env.GetNotBefore())
}

// PublishRaw publishes already encoded bytes as Publish does.
func (t *Transport) PublishRaw(ctx context.Context, topic string, body []byte) error {
	return t.publishTopic(ctx, topic, body, 0)
}

func (t *Transport) publishTopic(ctx context.Context, topic string, body []byte, notBefore int64) error {
	if err := checkTopic(topic); err != nil {
		return err
	}
	h := amqp.Table{HeaderTopic: topic}
	if notBefore > 0 {
		h[HeaderNotBefore] = notBefore
	}
	return t.publish(ctx, t.n.topicExchange(), topic, amqp.Publishing{ContentType: ContentType, Headers: h, Body: body})
}

// publishToGroup publishes body to group's queue of topic only, not to be
// handled before notBefore (ms since the epoch, 0: now): through the
// longest delay queue not longer than the wait, or straight to the queue
// when the wait is shorter than MinDelay. id is the message_id.
func (t *Transport) publishToGroup(ctx context.Context, group, topic string, body []byte, id string, notBefore int64) error {
	q := t.n.queue(group, topic)
	h := amqp.Table{HeaderTopic: topic}
	if notBefore > 0 {
		h[HeaderNotBefore] = notBefore
	}
	msg := amqp.Publishing{ContentType: ContentType, Headers: h, Body: body, MessageId: id}
	for {
		wait := time.UnixMilli(notBefore).Sub(t.cfg.Now())
		exp, ok := bucket(wait, t.cfg.minExp())
		if !ok {
			return t.publish(ctx, t.n.retryExchange(), q, msg)
		}
		dq := t.n.delayQueue(group, exp)
		if _, ok := t.declared.Load(dq); !ok {
			// Declaring a quorum queue takes a while: the wait is
			// measured again and may call for a shorter queue.
			if _, err := t.declareDelay(group, exp); err != nil {
				return err
			}
			continue
		}
		h[headerCC] = []any{q}
		return t.publish(ctx, t.n.delayExchange(), dq, msg)
	}
}

// Backlog counts group's messages not yet acknowledged: ready in its
// queues (of cfg.Topology's topics and of this Transport's
// subscriptions) and its delay queues, plus the deliveries this
// Transport's subscriptions of group hold unsettled. AMQP does not report
// what another connection holds unacknowledged: across processes, a zero
// means drained only once the other consumers stopped.
func (t *Transport) Backlog(ctx context.Context, group string) (int, error) {
	topics := map[string]bool{}
	for topic, groups := range t.cfg.Topology {
		for _, g := range groups {
			if g == group {
				topics[topic] = true
			}
		}
	}
	inProcess := 0
	t.subsMu.Lock()
	for s := range t.subs {
		if s.group == group {
			for _, tp := range s.topics {
				topics[tp] = true
			}
			inProcess += s.pending()
		}
	}
	t.subsMu.Unlock()
	var queues []string
	for tp := range topics {
		queues = append(queues, t.n.queue(group, tp))
	}
	for exp := t.cfg.minExp(); exp <= maxBucketExp; exp++ {
		queues = append(queues, t.n.delayQueue(group, exp))
	}
	n := inProcess
	for _, q := range queues {
		c, err := t.ready(q)
		if err != nil {
			return 0, fmt.Errorf("rabbitmq: backlog of %s: %w", group, err)
		}
		n += c
	}
	return n, nil
}

// ready is q's count of ready messages, 0 when q does not exist.
func (t *Transport) ready(q string) (int, error) {
	n := 0
	err := t.admin(func(ch *amqp.Channel) error {
		info, err := ch.QueueDeclarePassive(q, true, false, false, false, nil)
		var ae *amqp.Error
		if errors.As(err, &ae) && ae.Code == amqp.NotFound {
			return nil
		}
		if err != nil {
			return fmt.Errorf("queue %s: %w", q, err)
		}
		n = info.Messages
		return nil
	})
	return n, err
}
