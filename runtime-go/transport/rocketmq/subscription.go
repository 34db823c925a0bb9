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
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

var (
	_ transport.Subscription = (*subscription)(nil)
	_ transport.Extender     = (*subscription)(nil)
	_ transport.ForkingRetry = (*subscription)(nil)
)

// Subscribe starts a push consumer of group on topics and the group's
// retry topic.
func (t *Transport) Subscribe(ctx context.Context, group string, topics []string) (transport.Subscription, error) {
	if t.isClosed() {
		return nil, transport.ErrClosed
	}
	if group == "" || len(topics) == 0 {
		return nil, errors.New("rocketmq: Subscribe needs a group and at least one topic")
	}
	retry, err := t.ensureRetry(ctx, group)
	if err != nil {
		return nil, err
	}
	events, err := t.ensureEvents(ctx, topics...)
	if err != nil {
		return nil, err
	}
	names := append([]string{retry}, events...)
	// The dead-letter topics too: tooling, which creates no topic, marks
	// the broker's own dead letters of the group there.
	if err := t.ensure(ctx, 1, typeNormal, t.dlqName(), t.opsName()); err != nil {
		return nil, err
	}
	s := &subscription{t: t, group: group, seq: newSequencer(20 * time.Millisecond), ready: make(chan *entry, t.cfg.MaxInFlight),
		done: make(chan struct{}), entries: map[*transport.Delivery]*entry{}, lines: map[string][]*entry{}}
	pc, err := rocketmq.NewPushConsumer(
		consumer.WithNsResolver(primitive.NewPassthroughResolver(t.cfg.NameServers)),
		consumer.WithGroupName(t.groupName(group)),
		consumer.WithInstance(instanceName()),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
		consumer.WithConsumeMessageBatchMaxSize(batchSize),
		consumer.WithConsumeGoroutineNums(t.cfg.MaxInFlight),
		consumer.WithPullThresholdForQueue(int64(t.cfg.MaxInFlight)),
		consumer.WithConsumeTimeout(24*time.Hour))
	if err != nil {
		return nil, fmt.Errorf("rocketmq: consumer of group %s: %w", group, err)
	}
	for _, name := range names {
		if err := pc.Subscribe(name, consumer.MessageSelector{}, s.consume); err != nil {
			return nil, fmt.Errorf("rocketmq: group %s: subscribe to %s: %w", group, name, err)
		}
	}
	if err := pc.Start(); err != nil {
		return nil, fmt.Errorf("rocketmq: start the consumer of group %s: %w", group, err)
	}
	s.pc = pc
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		_ = pc.Shutdown()
		return nil, transport.ErrClosed
	}
	t.subs[s] = struct{}{}
	t.mu.Unlock()
	return s, nil
}

type subscription struct {
	t     *Transport
	group string
	pc    rocketmq.PushConsumer

	seq   *sequencer
	ready chan *entry   // held messages that are due, for Fetch
	done  chan struct{} // closed by Close

	holding sync.WaitGroup // consume callbacks under way

	mu      sync.Mutex
	closed  bool
	entries map[*transport.Delivery]*entry // handed out by Fetch, not settled
	lines   map[string][]*entry            // per biz_key: the one handed out, then those waiting
}

// entry is one message the client handed to consume, which waits for its
// outcome.
type entry struct {
	m      *primitive.MessageExt
	d      *transport.Delivery
	key    string // the biz_key whose line it is in; "" for none
	lease  *time.Timer
	result chan consumer.ConsumeResult // buffered: one outcome
}

// batchSize is how many messages of one queue the client hands the
// callback at once (at most a pull's).
const batchSize = 32

// RetryMayFork implements transport.ForkingRetry: Retry and DeadLetter
// store a copy, then settle the original.
func (s *subscription) RetryMayFork() {}

// consume is the push consumer's callback: a batch of one queue's
// messages in offset order (up to batchSize), on a goroutine of the
// client's pool. It hands them to Fetch in order, after the queue's
// earlier batches, and blocks until each is settled or handed back.
func (s *subscription) consume(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
	s.mu.Lock()
	if s.closed { // Close waits for the callbacks under way; none starts after
		s.mu.Unlock()
		return consumer.ConsumeRetryLater, nil
	}
	s.holding.Add(1)
	s.mu.Unlock()
	defer s.holding.Done()
	if len(msgs) == 0 {
		return consumer.ConsumeSuccess, nil
	}
	var result consumer.ConsumeResult
	cc, ok := primitive.GetConcurrentlyCtx(ctx)
	switch {
	case !ok:
		result = s.handOutWhenDue(msgs) // no queue to keep an order in
	case cc.MQ.Topic == s.t.retryTopic(s.group):
		// Retry, deferred and handed-back copies: each when due.
		result = s.handOutWhenDue(msgs)
	default:
		result = s.handOutInOrder(cc.MQ.String(), msgs)
	}
	if result == consumer.ConsumeRetryLater && ok {
		// The client hands the whole batch back to the broker, settled
		// messages too: their copies come again and are deduplicated.
		cc.DelayLevelWhenNextConsume = 1 // a second: the broker's shortest level
	}
	return result, nil
}

// handOutInOrder hands msgs, a batch of queue, to Fetch after the queue's
// earlier batches and waits for their outcomes.
func (s *subscription) handOutInOrder(queue string, msgs []*primitive.MessageExt) consumer.ConsumeResult {
	first, last := msgs[0].QueueOffset, msgs[len(msgs)-1].QueueOffset
	if queue != "" && !s.seq.wait(queue, first, s.done) {
		return consumer.ConsumeRetryLater
	}
	result := consumer.ConsumeSuccess
	var held []*entry
	for _, m := range msgs {
		e, r := s.prepare(m)
		if e == nil {
			result = worse(result, r)
			continue
		}
		if !s.queueUp(e) {
			held = append(held, e) // handed out when its key's line reaches it
			continue
		}
		select {
		case s.ready <- e:
			held = append(held, e)
		case <-s.done:
			s.leaveLine(e)
			result = consumer.ConsumeRetryLater
		}
	}
	if queue != "" {
		s.seq.pass(queue, first, last)
	}
	for _, e := range held {
		result = worse(result, s.await(e))
	}
	return result
}

// handOutWhenDue hands each of msgs, retry and deferred copies, to Fetch
// at its own not_before (the broker's timer writes them about in that
// order, not exactly), and waits for their outcomes.
func (s *subscription) handOutWhenDue(msgs []*primitive.MessageExt) consumer.ConsumeResult {
	results := make([]consumer.ConsumeResult, len(msgs))
	var wg sync.WaitGroup
	for i, m := range msgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, r := s.prepare(m)
			if e == nil {
				results[i] = r
				return
			}
			select {
			case s.ready <- e:
				results[i] = s.await(e)
			case <-s.done:
				results[i] = consumer.ConsumeRetryLater
			}
		}()
	}
	wg.Wait()
	result := consumer.ConsumeSuccess
	for _, r := range results {
		result = worse(result, r)
	}
	return result
}

// queueUp puts e in the line of its biz_key and reports whether it is at
// the head, to be handed out now: a key's messages of the event topics
// are handed out one at a time, in offset order (the biz_key picks the
// queue), while other keys' go on. Retry copies leave the line.
func (s *subscription) queueUp(e *entry) bool {
	e.key = lineKey(e.m)
	if e.key == "" {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines[e.key] = append(s.lines[e.key], e)
	return len(s.lines[e.key]) == 1
}

// lineKey is the biz_key whose line m joins: a msgcontract publisher's
// sharding key (message sets it to the biz_key) without decoding the
// body, else the envelope's; "" for a body that is no envelope.
func lineKey(m *primitive.MessageExt) string {
	if m.GetProperty(PropTopic) != "" {
		if k := m.GetShardingKey(); k != "" {
			return k
		}
	}
	if env, err := envelope.Unmarshal(m.Body); err == nil {
		return env.GetBizKey()
	}
	return ""
}

// leaveLine takes e, settled or handed back, out of its key's line and
// hands out the next message of the key.
func (s *subscription) leaveLine(e *entry) {
	if e.key == "" {
		return
	}
	s.mu.Lock()
	line := s.lines[e.key]
	i := slices.Index(line, e)
	if i < 0 {
		s.mu.Unlock()
		return
	}
	line = slices.Delete(line, i, i+1)
	if len(line) == 0 {
		delete(s.lines, e.key)
		s.mu.Unlock()
		return
	}
	s.lines[e.key] = line
	next := line[0]
	s.mu.Unlock()
	if i > 0 {
		return // e was waiting (the subscription closes): the head stays out
	}
	go func() {
		select {
		case s.ready <- next:
		case <-s.done: // its callback hands it back
		}
	}()
}

// worse is RECONSUME_LATER when either is.
func worse(a, b consumer.ConsumeResult) consumer.ConsumeResult {
	if a == consumer.ConsumeRetryLater || b == consumer.ConsumeRetryLater {
		return consumer.ConsumeRetryLater
	}
	return consumer.ConsumeSuccess
}

// prepare waits until m's not_before (a retry or deferred copy) and
// returns its entry for Fetch; or no entry and the outcome when it is
// settled here: a copy that came early and was sent on again, or the
// subscription closing meanwhile.
func (s *subscription) prepare(m *primitive.MessageExt) (*entry, consumer.ConsumeResult) {
	nb := notBefore(m)
	if !nb.IsZero() {
		wait := nb.Sub(s.t.cfg.Now())
		if wait > 2*s.t.cfg.TimerLead+time.Second {
			// Came early: a timer capped at the broker's longest, or a
			// broker whose timer is off. Sent on again, due later.
			env, _ := envelope.Unmarshal(m.Body)
			ctx, cancel := context.WithTimeout(context.Background(), s.t.cfg.PublishTimeout)
			defer cancel()
			if err := s.t.publishCopy(ctx, s.group, topicOf(s.t, m), env, m.Body, nb); err != nil {
				s.t.cfg.Logger.Warn("rocketmq: could not send an early retry copy on; the broker hands it back", "group", s.group, "err", err)
				return nil, consumer.ConsumeRetryLater
			}
			return nil, consumer.ConsumeSuccess
		}
		if wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-timer.C:
			case <-s.done:
				timer.Stop()
				return nil, consumer.ConsumeRetryLater
			}
		}
	}
	attempt := int(m.ReconsumeTimes) + 1
	if a, err := strconv.Atoi(m.GetProperty(PropAttempt)); err == nil && a > 0 {
		attempt = a
	}
	e := &entry{m: m, d: &transport.Delivery{
		ID:      m.GetProperty(primitive.PropertyUniqueClientMessageIdKeyIndex),
		Topic:   topicOf(s.t, m),
		Body:    m.Body,
		Attempt: attempt,
		Offset:  m.QueueOffset,
	}, result: make(chan consumer.ConsumeResult, 1)}
	if e.d.ID == "" {
		e.d.ID = m.MsgId
	}
	e.d.Handle = e
	return e, consumer.ConsumeSuccess
}

// await blocks until e is settled, or hands it back when the subscription
// closes first.
func (s *subscription) await(e *entry) consumer.ConsumeResult {
	select {
	case r := <-e.result:
		return r
	case <-s.done:
		// Close hands every unsettled delivery back; a settle racing
		// with it may have won.
		select {
		case r := <-e.result:
			return r
		default:
			s.leaveLine(e)
			return s.handBack(e)
		}
	}
}

// handBack stores an unsettled delivery's message again in the group's
// retry topic, same message id, Attempt one higher, due at once: its
// lease expired, or the subscription closed. When that fails the broker
// takes it back (RECONSUME_LATER: through the group's %RETRY% topic).
func (s *subscription) handBack(e *entry) consumer.ConsumeResult {
	ctx, cancel := context.WithTimeout(context.Background(), s.t.cfg.PublishTimeout)
	defer cancel()
	name, err := s.t.ensureRetry(ctx, s.group)
	if err == nil {
		m := primitive.NewMessage(name, e.m.Body)
		for k, v := range e.m.GetProperties() {
			m.WithProperty(k, v)
		}
		m.RemoveProperty(primitive.PropertyTimerDeliverMS)
		m.RemoveProperty(PropNotBefore)
		m.WithProperty(PropTopic, e.d.Topic)
		m.WithProperty(PropAttempt, strconv.Itoa(e.d.Attempt+1))
		m.WithProperty(primitive.PropertyUniqueClientMessageIdKeyIndex, e.d.ID)
		err = s.t.send(ctx, m)
	}
	if err != nil {
		s.t.cfg.Logger.Warn("rocketmq: could not hand a delivery back through the retry topic; the broker takes it back", "group", s.group, "id", e.d.ID, "err", err)
		return consumer.ConsumeRetryLater
	}
	return consumer.ConsumeSuccess
}

func notBefore(m *primitive.MessageExt) time.Time {
	v := m.GetProperty(PropNotBefore)
	if v == "" {
		return time.Time{}
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// topicOf is m's msgcontract topic: the property, or for a message of a
// producer that did not set it, its RocketMQ topic without the namespace.
func topicOf(t *Transport, m *primitive.MessageExt) string {
	if v := m.GetProperty(PropTopic); v != "" {
		return v
	}
	name := m.Topic
	if len(name) > len(t.cfg.Namespace) && name[:len(t.cfg.Namespace)] == t.cfg.Namespace {
		name = name[len(t.cfg.Namespace):]
	}
	return name
}

// Fetch returns the held messages that are due, at most n, waiting for
// the first.
func (s *subscription) Fetch(ctx context.Context, n int) ([]*transport.Delivery, error) {
	var out []*transport.Delivery
	take := func(e *entry) {
		s.mu.Lock()
		s.entries[e.d] = e
		e.lease = time.AfterFunc(s.t.cfg.Lease, func() { s.expire(e) })
		s.mu.Unlock()
		out = append(out, e.d)
	}
	select {
	case e := <-s.ready:
		take(e)
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return nil, transport.ErrClosed
	}
	for len(out) < n {
		select {
		case e := <-s.ready:
			take(e)
		default:
			return out, nil
		}
	}
	return out, nil
}

// expire hands e back when its lease ran out unsettled.
func (s *subscription) expire(e *entry) {
	s.mu.Lock()
	_, ok := s.entries[e.d]
	delete(s.entries, e.d)
	s.mu.Unlock()
	if ok {
		e.result <- s.handBack(e)
		s.leaveLine(e)
	}
}

// settle reports r for d to the client; an error when d is not held
// (settled already, or its lease expired and it was handed back).
func (s *subscription) settle(d *transport.Delivery, r consumer.ConsumeResult) error {
	s.mu.Lock()
	e, ok := s.entries[d]
	if ok {
		delete(s.entries, d)
		e.lease.Stop()
	}
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("rocketmq: delivery %s of group %s is not held: settled already, or its lease (%v) expired and the broker redelivers it; raise Config.Lease above the handler's time",
			d.ID, s.group, s.t.cfg.Lease)
	}
	e.result <- r
	s.leaveLine(e)
	return nil
}

// held reports whether d is handed out and not settled.
func (s *subscription) held(d *transport.Delivery) error {
	s.mu.Lock()
	_, ok := s.entries[d]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("rocketmq: delivery %s of group %s is not held: settled already, or its lease (%v) expired", d.ID, s.group, s.t.cfg.Lease)
	}
	return nil
}

// Ack settles ds as done.
func (s *subscription) Ack(_ context.Context, ds ...*transport.Delivery) error {
	var errs []error
	for _, d := range ds {
		errs = append(errs, s.settle(d, consumer.ConsumeSuccess))
	}
	return errors.Join(errs...)
}

// Defer stores d's message again in the group's retry topic, not to be
// handled before until, and settles d. The copy's Attempt starts at 1.
func (s *subscription) Defer(ctx context.Context, d *transport.Delivery, until time.Time) error {
	if err := s.held(d); err != nil {
		return err
	}
	env, _ := envelope.Unmarshal(d.Body)
	if err := s.t.publishCopy(ctx, s.group, d.Topic, env, d.Body, until); err != nil {
		return err
	}
	return s.settle(d, consumer.ConsumeSuccess)
}

// Retry stores env in the group's retry topic under a fresh message id,
// not to be handled before env.not_before, and settles d.
func (s *subscription) Retry(ctx context.Context, d *transport.Delivery, env *envelopepb.Envelope) error {
	if err := s.held(d); err != nil {
		return err
	}
	body, err := envelope.Marshal(env)
	if err != nil {
		return err
	}
	var nb time.Time
	if ms := env.GetNotBefore(); ms > 0 {
		nb = time.UnixMilli(ms)
	}
	if err := s.t.publishCopy(ctx, s.group, d.Topic, env, body, nb); err != nil {
		return err
	}
	return s.settle(d, consumer.ConsumeSuccess)
}

// DeadLetter stores rec in the dead-letter topic and settles d.
func (s *subscription) DeadLetter(ctx context.Context, d *transport.Delivery, rec *dlq.Record) error {
	if err := s.held(d); err != nil {
		return err
	}
	if err := s.t.storeRecord(ctx, rec); err != nil {
		return err
	}
	return s.settle(d, consumer.ConsumeSuccess)
}

// Lease implements transport.Extender: Config.Lease.
func (s *subscription) Lease() time.Duration { return s.t.cfg.Lease }

// Extend restarts the leases of ds.
func (s *subscription) Extend(_ context.Context, ds ...*transport.Delivery) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, d := range ds {
		e, ok := s.entries[d]
		if !ok {
			errs = append(errs, fmt.Errorf("rocketmq: extend delivery %s: not held (settled, or its lease expired)", d.ID))
			continue
		}
		e.lease.Reset(s.t.cfg.Lease)
	}
	return errors.Join(errs...)
}

// Close stops the consumer; every unsettled delivery is handed back to
// the broker, which delivers it again.
func (s *subscription) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for d, e := range s.entries {
		e.lease.Stop()
		delete(s.entries, d)
	}
	s.mu.Unlock()
	close(s.done)
	// The callbacks hand their unsettled deliveries back (which publishes)
	// before the client and the transport's producer stop.
	s.holding.Wait()
	s.t.mu.Lock()
	delete(s.t.subs, s)
	s.t.mu.Unlock()
	if err := s.pc.Shutdown(); err != nil {
		return fmt.Errorf("rocketmq: stop the consumer of group %s: %w", s.group, err)
	}
	return nil
}
