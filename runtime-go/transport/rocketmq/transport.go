package rocketmq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// User properties of the wire format (see the package doc).
const (
	// PropTopic is the msgcontract topic a message was published to.
	PropTopic = "MSGCONTRACT_TOPIC"
	// PropNotBefore is the time, in Unix milliseconds, before which a
	// retry or deferred copy must not be handled.
	PropNotBefore = "MSGCONTRACT_NOT_BEFORE"
	// PropAttempt is the delivery attempt of a message handed back after
	// its lease expired (2 and up); absent, the attempt is the broker's
	// reconsume count + 1.
	PropAttempt = "MSGCONTRACT_ATTEMPT"
)

// Transport is the RocketMQ transport: a transport.Publisher, a
// transport.Subscriber and a dlq.Store.
type Transport struct {
	cfg   Config
	prod  rocketmq.Producer
	admin admin.Admin

	topicsMu sync.Mutex
	topics   map[string]bool // RocketMQ topics known to exist

	mu     sync.Mutex
	closed bool
	subs   map[*subscription]struct{}
}

var (
	_ transport.Publisher  = (*Transport)(nil)
	_ transport.Subscriber = (*Transport)(nil)
)

// New connects to the name servers. It waits up to Config.ConnectTimeout
// for them to answer.
func New(ctx context.Context, cfg Config) (*Transport, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	routeClientLog(cfg.Logger)
	resolver := primitive.NewPassthroughResolver(cfg.NameServers)
	adm, err := admin.NewAdmin(admin.WithResolver(resolver))
	if err != nil {
		return nil, fmt.Errorf("rocketmq: admin client: %w", err)
	}
	prod, err := rocketmq.NewProducer(producer.WithNsResolver(resolver),
		producer.WithGroupName(cfg.Namespace+"msgcontract_producer"),
		producer.WithInstanceName(instanceName()),
		producer.WithQueueSelector(producer.NewHashQueueSelector()),
		producer.WithSendMsgTimeout(cfg.PublishTimeout), producer.WithRetry(2))
	if err != nil {
		adm.Close()
		return nil, fmt.Errorf("rocketmq: producer: %w", err)
	}
	if err := prod.Start(); err != nil {
		adm.Close()
		return nil, fmt.Errorf("rocketmq: start the producer: %w", err)
	}
	t := &Transport{cfg: cfg, prod: prod, admin: adm, topics: map[string]bool{}, subs: map[*subscription]struct{}{}}
	cctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	if err := untilUp(cctx, func() error { _, err := adm.FetchAllTopicList(cctx); return err }); err != nil {
		t.Close()
		return nil, fmt.Errorf("rocketmq: name servers %v did not answer within %v: %w", cfg.NameServers, cfg.ConnectTimeout, err)
	}
	return t, nil
}

// Namespace is Config.Namespace: the prefix of every RocketMQ name the
// transport uses.
func (t *Transport) Namespace() string { return t.cfg.Namespace }

// instanceName tells this process's clients apart from another
// process's in the same group (the client's default is the pid, which
// two containers may share).
func instanceName() string { return "msgcontract-" + event.NewMessageID() }

// untilUp runs fn until it succeeds or ctx ends, pausing 100 ms, doubling
// up to 1 s, between tries; it returns fn's last error.
func untilUp(ctx context.Context, fn func() error) error {
	pause := 100 * time.Millisecond
	for {
		err := fn()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// ensure makes sure the RocketMQ topics exist and are routed by the name
// servers, creating them on Config.Brokers when CreateTopics is on, with
// messageType (eventType's, or typeDelay for a retry topic).
func (t *Transport) ensure(ctx context.Context, queues int, messageType string, topics ...string) error {
	for _, topic := range topics {
		t.topicsMu.Lock()
		known := t.topics[topic]
		t.topicsMu.Unlock()
		if known {
			continue
		}
		ctx, cancel := context.WithTimeout(ctx, t.cfg.ConnectTimeout)
		err := t.ensureOne(ctx, queues, messageType, topic)
		cancel()
		if err != nil {
			return err
		}
		t.topicsMu.Lock()
		t.topics[topic] = true
		t.topicsMu.Unlock()
	}
	return nil
}

// ensureEvents makes sure the RocketMQ topics of msgcontract topics
// exist, each with its message type (eventType), and returns their names.
func (t *Transport) ensureEvents(ctx context.Context, topics ...string) ([]string, error) {
	names := make([]string, len(topics))
	for i, topic := range topics {
		names[i] = t.topicName(topic)
		if err := t.ensure(ctx, t.cfg.QueueNums, t.eventType(topic), names[i]); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// ensureRetry makes sure group's retry topic exists (a DELAY topic).
func (t *Transport) ensureRetry(ctx context.Context, group string) (string, error) {
	name := t.retryTopic(group)
	return name, t.ensure(ctx, t.cfg.QueueNums, typeDelay, name)
}

func (t *Transport) ensureOne(ctx context.Context, queues int, messageType, topic string) error {
	routed := func() error {
		qs, err := t.admin.FetchPublishMessageQueues(ctx, topic)
		if err == nil && len(qs) == 0 {
			err = errors.New("no queue")
		}
		return err
	}
	if routed() == nil {
		return nil
	}
	if !*t.cfg.CreateTopics {
		return fmt.Errorf("rocketmq: topic %s does not exist and Config.CreateTopics is off: create it (mqadmin updateTopic -t %s)", topic, topic)
	}
	for _, b := range t.cfg.Brokers {
		err := untilUp(ctx, func() error {
			return createTopic(ctx, b, topic, queues, messageType)
		})
		if err != nil {
			return fmt.Errorf("rocketmq: create topic %s on broker %s: %w", topic, b, err)
		}
	}
	if err := untilUp(ctx, routed); err != nil {
		return fmt.Errorf("rocketmq: topic %s was created but the name servers have no route for it within %v: %w", topic, t.cfg.ConnectTimeout, err)
	}
	return nil
}

// EnsureTopics makes sure the RocketMQ topics of msgcontract topics topics,
// the retry topics of groups and the dead-letter topics exist, creating
// them as Publish and Subscribe do. It is for members whose client cannot
// create topics (RocketMQ's 5.x Java and Python clients, which speak to
// the proxy) and for set-up scripts.
func (t *Transport) EnsureTopics(ctx context.Context, topics, groups []string) error {
	if t.isClosed() {
		return transport.ErrClosed
	}
	if _, err := t.ensureEvents(ctx, topics...); err != nil {
		return err
	}
	for _, g := range groups {
		if _, err := t.ensureRetry(ctx, g); err != nil {
			return err
		}
		if slices.Contains(t.cfg.FIFOGroups, g) {
			if err := t.ensureFIFOGroup(ctx, g); err != nil {
				return err
			}
		}
	}
	return t.ensure(ctx, 1, typeNormal, t.dlqName(), t.opsName())
}

// ensureFIFOGroup creates group orderly, and the non-orderly group its
// 5.x members read its retry topic as, on every broker of Config.Brokers:
// an orderly group's members get a queue's next message only once the one
// before is acknowledged, and a retry copy is held until its not_before.
func (t *Transport) ensureFIFOGroup(ctx context.Context, group string) error {
	if !*t.cfg.CreateTopics {
		return fmt.Errorf("rocketmq: FIFO group %s needs creating and Config.CreateTopics is off: create it (mqadmin updateSubGroup -g %s -o true)", group, t.groupName(group))
	}
	ctx, cancel := context.WithTimeout(ctx, t.cfg.ConnectTimeout)
	defer cancel()
	for _, b := range t.cfg.Brokers {
		for _, g := range []struct {
			name    string
			orderly bool
		}{{t.groupName(group), true}, {t.retryTopic(group), false}} {
			err := untilUp(ctx, func() error { return createGroup(ctx, b, g.name, g.orderly) })
			if err != nil {
				return fmt.Errorf("rocketmq: create consumer group %s on broker %s: %w", g.name, b, err)
			}
		}
	}
	return nil
}

// Publish sends env to topic and waits for the broker's answer.
func (t *Transport) Publish(ctx context.Context, topic string, env *envelopepb.Envelope) error {
	if t.isClosed() {
		return transport.ErrClosed
	}
	m, err := t.Message(ctx, topic, env)
	if err != nil {
		return err
	}
	return t.send(ctx, m)
}

// PublishRaw sends body as it is to topic's RocketMQ topic, with only the
// MSGCONTRACT_TOPIC property: what a foreign producer, or a broken one,
// sends (the demo's poison message, tests of the decode dead letter).
func (t *Transport) PublishRaw(ctx context.Context, topic string, body []byte) error {
	if t.isClosed() {
		return transport.ErrClosed
	}
	names, err := t.ensureEvents(ctx, topic)
	if err != nil {
		return err
	}
	name := names[0]
	m := primitive.NewMessage(name, body)
	m.WithProperty(PropTopic, topic)
	return t.send(ctx, m)
}

// Message returns the RocketMQ message Publish sends for env on topic
// (creating the topic as Publish does), for tools that send it
// themselves: the benchmarks fill a topic with the client's asynchronous
// sends.
func (t *Transport) Message(ctx context.Context, topic string, env *envelopepb.Envelope) (*primitive.Message, error) {
	body, err := envelope.Marshal(env)
	if err != nil {
		return nil, err
	}
	names, err := t.ensureEvents(ctx, topic)
	if err != nil {
		return nil, err
	}
	name := names[0]
	return message(name, topic, env, body, time.Time{}, time.Time{}), nil
}

// message builds a RocketMQ message of env (encoded as body) for the
// RocketMQ topic name, from msgcontract topic topic. A notBefore past zero
// marks a retry or deferred copy; a timerAt past zero makes it a timer
// message the broker delivers then.
func message(name, topic string, env *envelopepb.Envelope, body []byte, notBefore, timerAt time.Time) *primitive.Message {
	m := primitive.NewMessage(name, body)
	m.WithProperty(PropTopic, topic)
	var keys []string
	if k := env.GetBizKey(); k != "" {
		keys = append(keys, k)
		m.WithShardingKey(k)
	}
	if id := env.GetMessageId(); id != "" {
		keys = append(keys, id)
	}
	if len(keys) > 0 {
		m.WithKeys(keys)
	}
	if et := env.GetEventType(); et != "" {
		m.WithTag(et)
	}
	if !notBefore.IsZero() {
		m.WithProperty(PropNotBefore, strconv.FormatInt(notBefore.UnixMilli(), 10))
	}
	if !timerAt.IsZero() {
		m.WithProperty(primitive.PropertyTimerDeliverMS, strconv.FormatInt(timerAt.UnixMilli(), 10))
	}
	return m
}

func (t *Transport) send(ctx context.Context, m *primitive.Message) error {
	res, err := t.prod.SendSync(ctx, m)
	if err != nil {
		return fmt.Errorf("rocketmq: send to %s: %w", m.Topic, err)
	}
	if res.Status != primitive.SendOK {
		// FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE:
		// stored, but not as durably as the broker is configured to.
		return fmt.Errorf("rocketmq: send to %s: the broker stored the message but answered %s", m.Topic, sendStatus(res.Status))
	}
	return nil
}

func sendStatus(s primitive.SendStatus) string {
	switch s {
	case primitive.SendFlushDiskTimeout:
		return "FLUSH_DISK_TIMEOUT"
	case primitive.SendFlushSlaveTimeout:
		return "FLUSH_SLAVE_TIMEOUT"
	case primitive.SendSlaveNotAvailable:
		return "SLAVE_NOT_AVAILABLE"
	}
	return "status " + strconv.Itoa(int(s))
}

// maxTimer is how far ahead a timer message may be due: RocketMQ's
// timerMaxDelaySec defaults to three days.
const maxTimer = 72*time.Hour - time.Minute

// publishCopy sends body (an envelope) to group's retry topic, keeping its
// msgcontract topic, not to be handled before notBefore (zero: at once).
func (t *Transport) publishCopy(ctx context.Context, group, topic string, env *envelopepb.Envelope, body []byte, notBefore time.Time) error {
	name, err := t.ensureRetry(ctx, group)
	if err != nil {
		return err
	}
	var timerAt time.Time
	now := t.cfg.Now()
	if at := notBefore.Add(-t.cfg.TimerLead); !notBefore.IsZero() && at.After(now) {
		// Due within the lead: no timer, the subscription's hold waits.
		// Past the broker's longest timer, it comes early and the
		// subscription sends it on again.
		timerAt = at
		if limit := now.Add(maxTimer); at.After(limit) {
			timerAt = limit
		}
	}
	return t.send(ctx, message(name, topic, env, body, notBefore, timerAt))
}

func (t *Transport) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// Close closes every subscription (their unsettled deliveries come
// again) and the clients.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	subs := make([]*subscription, 0, len(t.subs))
	for s := range t.subs {
		subs = append(subs, s)
	}
	t.mu.Unlock()
	var errs []error
	for _, s := range subs {
		errs = append(errs, s.Close())
	}
	errs = append(errs, t.prod.Shutdown(), t.admin.Close())
	return errors.Join(errs...)
}
