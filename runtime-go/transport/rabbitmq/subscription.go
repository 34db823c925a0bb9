package rabbitmq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

var (
	_ transport.Subscription = (*subscription)(nil)
	_ transport.Extender     = (*subscription)(nil)
	_ transport.ForkingRetry = (*subscription)(nil)
)

// Subscribe declares group's queue of each topic (quorum, bound to the
// topic exchange and the retry exchange) and returns a subscription that
// consumes them from its first Fetch on, with basic.qos = Config.Prefetch
// or that Fetch's max. Members of one group share its queues; every group
// gets every message published after its queues exist.
func (t *Transport) Subscribe(ctx context.Context, group string, topics []string) (transport.Subscription, error) {
	if len(topics) == 0 {
		return nil, errors.New("rabbitmq: Subscribe needs at least one topic")
	}
	if err := checkGroup(group); err != nil {
		return nil, err
	}
	s := &subscription{t: t, group: group, topics: topics, queues: map[string]string{}, changed: make(chan struct{}),
		out: map[*entry]struct{}{}, unsettled: map[*amqp.Channel]map[uint64]struct{}{}}
	for _, tp := range topics {
		if err := checkTopic(tp); err != nil {
			return nil, err
		}
		s.queues[t.n.queue(group, tp)] = tp
	}
	// A member started while the broker restarts waits for it, up to
	// ConnectTimeout, as New does.
	ctx, cancel := context.WithTimeout(ctx, t.cfg.ConnectTimeout)
	defer cancel()
	err := untilUp(ctx, func() error {
		for _, tp := range topics {
			if err := t.declareGroup(ctx, group, tp); err != nil {
				return err
			}
		}
		// The short delay queues, declared ahead: creating a quorum queue
		// takes tens of milliseconds, as long as a short retry's whole wait.
		for exp := t.cfg.minExp(); exp <= predeclareExp; exp++ {
			if _, err := t.declareDelay(group, exp); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	t.subsMu.Lock()
	t.subs[s] = struct{}{}
	t.subsMu.Unlock()
	return s, nil
}

// predeclareExp is the longest delay queue Subscribe declares ahead:
// 2^12 ms, 4.1 s.
const predeclareExp = 12

// RetryMayFork: Retry, DeadLetter and a Defer through a delay queue
// publish, then acknowledge; a crash between the two delivers the
// original again.
func (s *subscription) RetryMayFork() {}

// subscription consumes a group's queues on one channel. Deliveries go
// through ready to Fetch; a delivery whose not_before header lies ahead is
// held (shorter than MinDelay) or sent on through a delay queue.
type subscription struct {
	t      *Transport
	group  string
	topics []string
	queues map[string]string // queue name (= consumer tag) -> topic

	mu       sync.Mutex
	changed  chan struct{} // closed, and replaced, when ready, err or closed change
	ch       *amqp.Channel // nil until the first Fetch, and after it closed
	prefetch int           // the first Fetch's max
	ready    []*entry
	out      map[*entry]struct{} // fetched, unsettled
	waiting  int                 // held until due or being sent to a delay queue
	err      error               // the channel closed
	closed   bool

	// ackMu serializes every basic.ack and basic.nack the subscription
	// sends with its unsettled set, so that a basic.ack(multiple) never
	// covers a delivery settled another way: a second ack or nack of a
	// tag the broker no longer holds would close the channel
	// (PRECONDITION_FAILED, unknown delivery tag).
	ackMu     sync.Mutex
	unsettled map[*amqp.Channel]map[uint64]struct{} // per channel: tags received and not yet acked or nacked
}

// entry is one delivery's state; Delivery.Handle.
type entry struct {
	msg    amqp.Delivery
	ch     *amqp.Channel
	queue  string
	d      *transport.Delivery
	lease  *time.Timer
	done   bool // settled, or handed back when its lease expired
	expire bool // handed back when its lease expired
}

func (s *subscription) start(prefetch int) error {
	ch, err := s.t.channel()
	if err != nil {
		return fmt.Errorf("rabbitmq: consume for group %s: %w", s.group, err)
	}
	if s.t.cfg.Prefetch > 0 {
		prefetch = s.t.cfg.Prefetch
	}
	if err := ch.Qos(min(max(prefetch, 1), 65535), 0, false); err != nil {
		ch.Close()
		return fmt.Errorf("rabbitmq: basic.qos %d for group %s: %w", prefetch, s.group, err)
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	s.ackMu.Lock()
	s.unsettled[ch] = map[uint64]struct{}{}
	s.ackMu.Unlock()
	for q := range s.queues {
		msgs, err := ch.Consume(q, q, false, false, false, false, nil)
		if err != nil {
			ch.Close()
			s.ackMu.Lock()
			delete(s.unsettled, ch)
			s.ackMu.Unlock()
			return fmt.Errorf("rabbitmq: consume %s: %w", q, err)
		}
		go s.receive(ch, q, msgs)
	}
	go func() {
		e, ok := <-closed
		s.mu.Lock()
		defer s.mu.Unlock()
		if ok && e != nil && !s.closed && s.ch == ch {
			s.err = fmt.Errorf("rabbitmq: the channel of group %s closed: %w; its unacknowledged deliveries went back to the queues", s.group, e)
			s.broadcast()
		}
	}()
	s.ch = ch
	return nil
}

// broadcast wakes every Fetch waiting; s.mu is held.
func (s *subscription) broadcast() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// receive turns q's deliveries into entries.
func (s *subscription) receive(ch *amqp.Channel, q string, msgs <-chan amqp.Delivery) {
	for m := range msgs {
		s.ackMu.Lock()
		if tags, ok := s.unsettled[ch]; ok { // else the channel was replaced: the broker requeued it
			tags[m.DeliveryTag] = struct{}{}
		}
		s.ackMu.Unlock()
		e := &entry{msg: m, ch: ch, queue: q}
		e.d = &transport.Delivery{ID: m.MessageId, Topic: s.queues[q], Body: m.Body, Attempt: 1 + deliveryCount(m.Headers), Handle: e}
		if nb := notBefore(m.Headers); nb > 0 {
			if wait := time.UnixMilli(nb).Sub(s.t.cfg.Now()); wait > 0 {
				s.delay(e, nb, wait)
				continue
			}
		}
		s.mu.Lock()
		if s.ch == nil || s.ch == ch {
			s.ready = append(s.ready, e)
			s.broadcast()
		}
		s.mu.Unlock()
	}
}

// delay keeps e from Fetch until nb (ms since the epoch): held here when
// the wait is shorter than MinDelay, else sent on through a delay queue
// under the same message_id (it is the same stored copy) and acknowledged.
func (s *subscription) delay(e *entry, nb int64, wait time.Duration) {
	s.mu.Lock()
	s.waiting++
	s.mu.Unlock()
	if _, ok := bucket(wait, s.t.cfg.minExp()); !ok {
		time.AfterFunc(wait, func() {
			s.mu.Lock()
			s.waiting--
			if !s.closed && (s.ch == nil || s.ch == e.ch) { // else its channel's gone and the broker requeued it
				s.ready = append(s.ready, e)
				s.broadcast()
			}
			s.mu.Unlock()
		})
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.t.cfg.ConnectTimeout)
		defer cancel()
		err := s.t.publishToGroup(ctx, s.group, e.d.Topic, e.msg.Body, e.msg.MessageId, nb)
		if err == nil {
			// A failed ack (the channel closed) redelivers it: a second
			// copy under the same message_id, which the claims absorb.
			_ = s.ack(e.ch, e.msg.DeliveryTag)
		} else {
			// Handed back to come again and try again, not in a tight
			// loop while the broker refuses.
			time.Sleep(time.Second)
			_ = s.nack(e.ch, e.msg.DeliveryTag)
		}
		s.mu.Lock()
		s.waiting--
		s.mu.Unlock()
	}()
}

func deliveryCount(h amqp.Table) int {
	switch v := h[headerDeliveryCount].(type) {
	case int64:
		return int(v)
	case int32:
		return int(v)
	case int:
		return v
	}
	return 0
}

func notBefore(h amqp.Table) int64 {
	switch v := h[HeaderNotBefore].(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	case int:
		return int64(v)
	}
	return 0
}

// Fetch returns up to n deliveries, waiting until one is ready or ctx
// ends. The first Fetch starts consuming, with basic.qos = n unless
// Config.Prefetch is set.
func (s *subscription) Fetch(ctx context.Context, n int) ([]*transport.Delivery, error) {
	if n < 1 {
		n = 1
	}
	s.mu.Lock()
	if s.err != nil && !s.closed {
		// The channel closed (a broker restart, a lost connection): the
		// broker requeued its unacknowledged deliveries, so the ones not
		// handed out yet are dropped and consuming starts again.
		s.ackMu.Lock()
		delete(s.unsettled, s.ch)
		s.ackMu.Unlock()
		s.ready, s.err, s.ch = nil, nil, nil
	}
	if s.ch == nil && !s.closed {
		if s.prefetch == 0 {
			s.prefetch = n
		}
		if err := s.start(s.prefetch); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	s.mu.Unlock()
	for {
		s.mu.Lock()
		switch {
		case s.closed:
			s.mu.Unlock()
			return nil, transport.ErrClosed
		case len(s.ready) > 0:
			k := min(n, len(s.ready))
			batch := s.ready[:k:k]
			s.ready = s.ready[k:]
			ds := make([]*transport.Delivery, k)
			for i, e := range batch {
				s.out[e] = struct{}{}
				e.lease = time.AfterFunc(s.t.cfg.Lease, func() { s.expire(e) })
				ds[i] = e.d
			}
			s.mu.Unlock()
			return ds, nil
		case s.err != nil:
			err := s.err
			s.mu.Unlock()
			return nil, err
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		}
	}
}

// expire hands e back to the broker when its lease ran out unsettled: the
// queue delivers it again, with x-delivery-count one higher.
func (s *subscription) expire(e *entry) {
	s.mu.Lock()
	if e.done {
		s.mu.Unlock()
		return
	}
	e.done, e.expire = true, true
	delete(s.out, e)
	s.mu.Unlock()
	_ = s.nack(e.ch, e.msg.DeliveryTag)
}

// settle marks d settled; an error when its lease expired first.
func (s *subscription) settle(d *transport.Delivery) (*entry, error) {
	e, ok := d.Handle.(*entry)
	if !ok {
		return nil, fmt.Errorf("rabbitmq: delivery %s is not from this transport", d.ID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.done {
		if e.expire {
			return nil, fmt.Errorf("rabbitmq: delivery %s of %s: its lease (%v) expired and the broker redelivers it; raise Config.Lease above the handler's time", d.ID, e.queue, s.t.cfg.Lease)
		}
		return nil, fmt.Errorf("rabbitmq: delivery %s of %s is settled already", d.ID, e.queue)
	}
	e.done = true
	if e.lease != nil {
		e.lease.Stop()
	}
	delete(s.out, e)
	return e, nil
}

// Ack acknowledges deliveries: one basic.ack(multiple) for those of a
// channel that are all it holds unsettled up to the highest of them (a
// fetch's whole batch, usually), a basic.ack each for the rest. Quorum
// queues write one log entry per ack frame: a settle per delivery costs
// a bare consuming loop 28% of its rate in the bench (bench/rabbitmq).
func (s *subscription) Ack(_ context.Context, ds ...*transport.Delivery) error {
	var errs []error
	byCh := map[*amqp.Channel][]*transport.Delivery{}
	var chs []*amqp.Channel
	for _, d := range ds {
		e, err := s.settle(d)
		if err != nil {
			errs = append(errs, fmt.Errorf("rabbitmq: ack %s: %w", d.ID, err))
			continue
		}
		if _, ok := byCh[e.ch]; !ok {
			chs = append(chs, e.ch)
		}
		byCh[e.ch] = append(byCh[e.ch], d)
	}
	for _, ch := range chs {
		ds := byCh[ch]
		tags := make([]uint64, len(ds))
		for i, d := range ds {
			tags[i] = d.Handle.(*entry).msg.DeliveryTag
		}
		if err := s.ack(ch, tags...); err != nil {
			for _, d := range ds {
				errs = append(errs, fmt.Errorf("rabbitmq: ack %s: %w", d.ID, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ack sends basic.ack for tags of ch: one with multiple=true up to the
// highest tag below every other tag ch holds unsettled, one each for the
// tags above it.
func (s *subscription) ack(ch *amqp.Channel, tags ...uint64) error {
	s.ackMu.Lock()
	defer s.ackMu.Unlock()
	held := s.unsettled[ch]
	mine := make(map[uint64]bool, len(tags))
	for _, t := range tags {
		mine[t] = true
	}
	// The lowest tag unsettled on ch that is not being acknowledged here:
	// a multiple ack must stay below it.
	other := uint64(math.MaxUint64)
	for t := range held {
		if !mine[t] && t < other {
			other = t
		}
	}
	slices.Sort(tags)
	k := 0 // tags[:k] are below other
	for k < len(tags) && tags[k] < other {
		k++
	}
	var errs []error
	if k >= 2 && held != nil {
		if err := ch.Ack(tags[k-1], true); err != nil {
			errs = append(errs, err)
		}
	} else {
		k = 0
	}
	for _, t := range tags[k:] {
		if err := ch.Ack(t, false); err != nil {
			errs = append(errs, err)
		}
	}
	for _, t := range tags {
		delete(held, t)
	}
	return errors.Join(errs...)
}

// nack hands tag of ch back to its queue (basic.nack, requeue).
func (s *subscription) nack(ch *amqp.Channel, tag uint64) error {
	s.ackMu.Lock()
	defer s.ackMu.Unlock()
	delete(s.unsettled[ch], tag)
	return ch.Nack(tag, false, true)
}

// Defer hands d back to be delivered again not before until: held in the
// subscription when that is less than MinDelay away, else sent through a
// delay queue under the same message_id and acknowledged.
func (s *subscription) Defer(_ context.Context, d *transport.Delivery, until time.Time) error {
	e, err := s.settle(d)
	if err != nil {
		return err
	}
	ne := &entry{msg: e.msg, ch: e.ch, queue: e.queue}
	ne.d = &transport.Delivery{ID: d.ID, Topic: d.Topic, Body: d.Body, Attempt: d.Attempt, Handle: ne}
	wait := until.Sub(s.t.cfg.Now())
	if wait <= 0 {
		wait = time.Nanosecond
	}
	s.delay(ne, until.UnixMilli(), wait)
	return nil
}

// Retry sends env, the retry copy, to this group's queue only, through
// the delay queue its not_before calls for, under a fresh message_id, and
// then acknowledges d. If the publish fails d goes back to the queue.
func (s *subscription) Retry(ctx context.Context, d *transport.Delivery, env *envelopepb.Envelope) error {
	e, err := s.settle(d)
	if err != nil {
		return err
	}
	body, err := envelope.Marshal(env)
	if err == nil {
		err = s.t.publishToGroup(ctx, s.group, d.Topic, body, event.NewMessageID(), env.GetNotBefore())
	}
	if err != nil {
		_ = s.nack(e.ch, e.msg.DeliveryTag)
		return fmt.Errorf("rabbitmq: retry %s: %w", d.ID, err)
	}
	return s.ack(e.ch, e.msg.DeliveryTag)
}

// DeadLetter stores rec in the dead-letter queue, then acknowledges d.
func (s *subscription) DeadLetter(ctx context.Context, d *transport.Delivery, rec *dlq.Record) error {
	e, err := s.settle(d)
	if err != nil {
		return err
	}
	if err := s.t.storeRecord(ctx, rec); err != nil {
		_ = s.nack(e.ch, e.msg.DeliveryTag)
		return err
	}
	return s.ack(e.ch, e.msg.DeliveryTag)
}

// Lease implements transport.Extender: Config.Lease.
func (s *subscription) Lease() time.Duration { return s.t.cfg.Lease }

// Extend restarts the leases of ds.
func (s *subscription) Extend(_ context.Context, ds ...*transport.Delivery) error {
	var errs []error
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range ds {
		e, ok := d.Handle.(*entry)
		if !ok || e.done || e.lease == nil {
			errs = append(errs, fmt.Errorf("rabbitmq: extend %s: not held by this subscription", d.ID))
			continue
		}
		e.lease.Reset(s.t.cfg.Lease)
	}
	return errors.Join(errs...)
}

// pending counts the deliveries the subscription holds unsettled.
func (s *subscription) pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ready) + len(s.out) + s.waiting
}

// Close closes the subscription's channel: the broker requeues whatever
// it had not acknowledged.
func (s *subscription) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for e := range s.out {
		e.done = true
		if e.lease != nil {
			e.lease.Stop()
		}
	}
	s.out, s.ready = map[*entry]struct{}{}, nil
	ch := s.ch
	s.broadcast()
	s.mu.Unlock()
	s.t.subsMu.Lock()
	delete(s.t.subs, s)
	s.t.subsMu.Unlock()
	if ch == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- ch.Close() }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, amqp.ErrClosed) {
			return fmt.Errorf("rabbitmq: close the channel of group %s: %w", s.group, err)
		}
		return nil
	case <-time.After(5 * time.Second):
		if err := s.t.blockedErr(); err != nil {
			return fmt.Errorf("rabbitmq: close the channel of group %s: no answer in 5s: %w", s.group, err)
		}
		return fmt.Errorf("rabbitmq: close the channel of group %s: no answer from the broker in 5s", s.group)
	}
}

// storeRecord publishes rec, under a fresh time-ordered id, to the
// dead-letter queue.
func (t *Transport) storeRecord(ctx context.Context, rec *dlq.Record) error {
	r := *rec
	r.ID = newRecordID(t.cfg.Now())
	body, err := json.Marshal(&r)
	if err != nil {
		return fmt.Errorf("rabbitmq: dead-letter record: %w", err)
	}
	return t.publish(ctx, "", t.n.dlq(), amqp.Publishing{ContentType: "application/json", MessageId: r.ID,
		Headers: amqp.Table{HeaderDLQGroup: r.Group, HeaderTopic: r.Topic}, Body: body})
}
