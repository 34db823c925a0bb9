package kafka

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// Subscribe joins group's consumer group on topics and on the group's
// retry topics, creating missing topics (and the dead-letter topics) when
// CreateTopics is on. A group without committed offsets starts at the
// oldest record.
func (t *Transport) Subscribe(ctx context.Context, group string, topics []string) (transport.Subscription, error) {
	if group == "" || len(topics) == 0 {
		return nil, errors.New("kafka: Subscribe needs a group and at least one topic")
	}
	var specs []topicSpec
	var names []string
	for _, tp := range topics {
		main, retry := t.topicName(tp), t.retryTopic(group, tp)
		specs = append(specs, topicSpec{name: main}, topicSpec{name: retry}, t.dlqSpec(tp), t.opsSpec(tp))
		names = append(names, main, retry)
	}
	if err := t.ensure(ctx, specs...); err != nil {
		return nil, err
	}
	s := &subscription{
		t: t, group: group, parts: map[tp]*partState{}, keys: map[uint64]*keyQueue{}, seed: maphash.MakeSeed(),
		inflight: map[*entry]struct{}{}, wake: make(chan struct{}), origin: map[string]string{},
	}
	for _, tp := range topics {
		s.origin[t.topicName(tp)] = tp
		s.origin[t.retryTopic(group, tp)] = tp
	}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(t.cfg.Brokers...),
		kgo.DialTimeout(t.cfg.ConnectTimeout),
	}, t.cfg.Opts...)
	opts = append(opts,
		kgo.ConsumerGroup(t.groupName(group)),
		kgo.ConsumeTopics(names...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.SessionTimeout(t.cfg.SessionTimeout),
		kgo.HeartbeatInterval(max(t.cfg.SessionTimeout/10, 100*time.Millisecond)),
		kgo.RebalanceTimeout(t.cfg.RevokeWait+t.cfg.SessionTimeout),
		kgo.FetchMaxWait(500*time.Millisecond),
		kgo.OnPartitionsAssigned(s.assigned),
		kgo.OnPartitionsRevoked(s.revoked),
		kgo.OnPartitionsLost(s.lost),
	)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: consumer for group %s: %w", group, err)
	}
	s.cl = cl
	var pollCtx context.Context
	pollCtx, s.stop = context.WithCancel(context.Background())
	s.loops.Add(2)
	go s.poll(pollCtx)
	go s.commitLoop(pollCtx)
	return s, nil
}

type tp struct {
	topic string
	part  int32
}

// subscription hands out the records of its assigned partitions. Records
// of one key are handed out one at a time, in offset order; other keys
// go on. A partition's offset is committed up to its first unsettled
// record, so nothing is committed before its outcome is durable.
// RetryMayFork: Retry and DeadLetter produce, then settle (see Retry).
func (s *subscription) RetryMayFork() {}

type subscription struct {
	t      *Transport
	group  string
	cl     *kgo.Client
	origin map[string]string // Kafka topic -> the user's topic
	stop   context.CancelFunc
	loops  sync.WaitGroup

	mu    sync.Mutex
	parts map[tp]*partState
	// keys holds the queues of the keys with unsettled records, by a
	// 64-bit hash of the key: two keys that collide share a queue, which
	// only hands out their records one at a time, in offset order.
	keys     map[uint64]*keyQueue
	seed     maphash.Seed
	ready    []*entry // candidates; checked by available when taken
	inflight map[*entry]struct{}
	// leaseFloor is at or before the earliest lease in inflight (leases
	// only move later), so Fetch scans inflight for expired leases only
	// once it has passed.
	leaseFloor time.Time
	buffered   int
	wake       chan struct{} // closed and replaced on every change
	closed     bool
}

type partState struct {
	tp        tp
	q         []*entry // records not yet below the commit point, in offset order
	next      int64    // the commit point: offset after the settled prefix; -1 when none
	epoch     int32
	committed int64
	draining  bool // revoked: hand nothing out, wait for in-flight work
	gone      bool // released
}

// keyQueue holds one key's unsettled records in offset order; its first
// is the one that may be handed out.
type keyQueue struct {
	hash  uint64
	keyed bool // in keys; a record without a key has a queue of its own
	q     []*entry
	one   [1]*entry // q's storage while it holds one record, the common case
}

type entry struct {
	rec      *kgo.Record
	ps       *partState
	kq       *keyQueue // its key's queue, while it is in it
	topic    string    // the user's topic
	attempts int
	settled  bool
	inflight bool
	deferred bool
	queued   bool
	lease    time.Time
	timer    *time.Timer
	// first is the delivery of the first attempt, built by addAll on the
	// poll goroutine so that Fetch, on the consumer's, only hands it out.
	// A later attempt gets a new one: the holder of an expired lease may
	// still read its own.
	first transport.Delivery
}

// notify wakes everyone waiting for a change. Callers hold s.mu.
func (s *subscription) notify() {
	close(s.wake)
	s.wake = make(chan struct{})
}

func (s *subscription) push(e *entry) {
	if !e.queued {
		e.queued = true
		s.ready = append(s.ready, e)
	}
}

func (s *subscription) available(e *entry) bool {
	if e.settled || e.inflight || e.deferred || e.ps.draining || e.ps.gone {
		return false
	}
	return e.kq != nil && len(e.kq.q) > 0 && e.kq.q[0] == e
}

// poll moves records from the client into the subscription.
func (s *subscription) poll(ctx context.Context) {
	defer s.loops.Done()
	for ctx.Err() == nil {
		s.mu.Lock()
		room := s.t.cfg.MaxBuffered - s.buffered
		wake := s.wake
		s.mu.Unlock()
		if room <= 0 {
			select {
			case <-ctx.Done():
			case <-wake:
			}
			continue
		}
		fs := s.cl.PollRecords(ctx, room)
		if fs.IsClientClosed() {
			s.cl.AllowRebalance()
			return
		}
		var errs int
		fs.EachError(func(topic string, p int32, err error) {
			if !errors.Is(err, context.Canceled) {
				errs++
				s.t.cfg.Logger.Warn("msgcontract: kafka fetch failed; retrying", "group", s.group, "topic", topic,
					"partition", p, "error", err)
			}
		})
		s.mu.Lock()
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if n := len(p.Records); n > 0 && s.t.lag != nil {
				lag := p.HighWatermark - p.Records[n-1].Offset - 1
				s.t.lag.WithLabelValues(s.group, p.Topic, strconv.Itoa(int(p.Partition))).Set(float64(max(lag, 0)))
			}
			s.addAll(p.Topic, p.Partition, p.Records)
		})
		s.notify()
		s.mu.Unlock()
		s.cl.AllowRebalance()
		if errs > 0 && fs.NumRecords() == 0 {
			sleep(ctx, 200*time.Millisecond) // the broker is away: do not spin
		}
	}
	s.cl.AllowRebalance()
}

// addAll takes in the polled records of one partition. Their entries
// (and the queues of their new keys) are allocated together, one
// allocation per poll and partition instead of two per record. Callers
// hold s.mu.
func (s *subscription) addAll(topic string, part int32, rs []*kgo.Record) {
	ps := s.parts[tp{topic, part}]
	if ps == nil || ps.draining || ps.gone || len(rs) == 0 {
		return // not ours (any more): its next owner reads it from the committed offset
	}
	origin := s.origin[topic]
	es := make([]entry, len(rs))
	var kqs []keyQueue
	for i, r := range rs {
		e := &es[i]
		e.rec, e.ps, e.topic = r, ps, origin
		for _, h := range r.Headers {
			if h.Key == headerTopic {
				e.topic = string(h.Value)
			}
		}
		e.first = transport.Delivery{ID: recordID(topic, part, r.Offset), Topic: e.topic, Body: r.Value, Attempt: 1,
			Partition: part, Offset: r.Offset, Handle: e}
		ps.q = append(ps.q, e)
		s.buffered++
		var kq *keyQueue
		h := maphash.Bytes(s.seed, r.Key)
		if len(r.Key) > 0 {
			kq = s.keys[h]
		}
		if kq == nil {
			if len(kqs) == 0 {
				kqs = make([]keyQueue, len(rs)-i)
			}
			kq, kqs = &kqs[0], kqs[1:]
			kq.q = kq.one[:0]
			if len(r.Key) > 0 { // no key, no order to keep: a queue of its own, in no map
				kq.hash, kq.keyed = h, true
				s.keys[h] = kq
			}
		}
		e.kq = kq
		kq.q = append(kq.q, e)
		if len(kq.q) == 1 {
			s.push(e)
		}
	}
}

// Fetch hands out up to n deliveries, waiting until one is available or
// ctx ends. A delivery whose lease expired unsettled is handed out again.
func (s *subscription) Fetch(ctx context.Context, n int) ([]*transport.Delivery, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, transport.ErrClosed
		}
		now := time.Now()
		next := now.Add(time.Second)
		if len(s.inflight) > 0 && !s.leaseFloor.After(now) {
			floor := now.Add(s.t.cfg.Lease)
			for e := range s.inflight {
				if !e.lease.After(now) {
					e.inflight = false
					delete(s.inflight, e)
					s.push(e)
				} else {
					floor = minTime(floor, e.lease)
				}
			}
			s.leaseFloor = floor
		}
		if len(s.inflight) > 0 {
			next = minTime(next, s.leaseFloor)
		}
		var out []*transport.Delivery
		for len(s.ready) > 0 && len(out) < n {
			e := s.ready[0]
			s.ready[0] = nil
			s.ready = s.ready[1:]
			e.queued = false
			if !s.available(e) {
				continue
			}
			e.inflight = true
			e.attempts++
			e.lease = now.Add(s.t.cfg.Lease)
			if len(s.inflight) == 0 || e.lease.Before(s.leaseFloor) {
				s.leaseFloor = e.lease
			}
			s.inflight[e] = struct{}{}
			d := &e.first
			if e.attempts > 1 {
				d = &transport.Delivery{ID: d.ID, Topic: e.topic, Body: e.rec.Value, Attempt: e.attempts,
					Partition: d.Partition, Offset: d.Offset, Handle: e}
			}
			out = append(out, d)
		}
		wake := s.wake
		s.mu.Unlock()
		if len(out) > 0 {
			if out = s.unframeAll(ctx, out); len(out) == 0 {
				continue // every one was dead-lettered or deferred
			}
			return out, nil
		}
		timer := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

func entryOf(d *transport.Delivery) *entry { return d.Handle.(*entry) }

// settle marks entries done: their keys' next records may go, and their
// partitions' commit points move past every settled record at the front.
func (s *subscription) settle(es ...*entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range es {
		s.settleLocked(e)
	}
	s.notify()
}

func (s *subscription) settleLocked(e *entry) {
	if e.settled || e.ps.gone {
		return
	}
	e.settled, e.inflight, e.deferred = true, false, false
	delete(s.inflight, e)
	if e.timer != nil {
		e.timer.Stop()
	}
	s.unkey(e)
	ps := e.ps
	for len(ps.q) > 0 && ps.q[0].settled {
		ps.next, ps.epoch = ps.q[0].rec.Offset+1, ps.q[0].rec.LeaderEpoch
		ps.q[0] = nil
		ps.q = ps.q[1:]
		s.buffered--
	}
}

// unkey removes e from its key's queue and readies the key's next record.
func (s *subscription) unkey(e *entry) {
	kq := e.kq
	if kq == nil {
		return
	}
	e.kq = nil
	for i, x := range kq.q {
		if x == e {
			kq.q = append(kq.q[:i], kq.q[i+1:]...)
			break
		}
	}
	if len(kq.q) == 0 {
		if kq.keyed { // in keys from its first record until now
			delete(s.keys, kq.hash)
		}
		return
	}
	s.push(kq.q[0])
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Ack settles deliveries: their offsets may be committed.
func (s *subscription) Ack(_ context.Context, ds ...*transport.Delivery) error {
	es := make([]*entry, len(ds))
	for i, d := range ds {
		es[i] = entryOf(d)
	}
	s.settle(es...)
	return nil
}

// Defer keeps d unsettled (its offset is not committed, its key waits) and
// hands it out again at until. Other keys go on meanwhile.
func (s *subscription) Defer(_ context.Context, d *transport.Delivery, until time.Time) error {
	e := entryOf(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.settled || e.ps.gone {
		return nil
	}
	e.inflight = false
	delete(s.inflight, e)
	e.deferred = true
	if e.timer != nil {
		e.timer.Stop()
	}
	e.timer = time.AfterFunc(max(until.Sub(s.t.cfg.Now()), 0), func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if e.deferred {
			e.deferred = false
			s.push(e)
			s.notify()
		}
	})
	return nil
}

// Retry publishes env to the group's retry topic for d's topic (key:
// biz_key), waits for the broker's acknowledgement, then settles d. A
// crash between the two leaves a second copy of the attempt; the consumer
// keeps the message to one of them (transport.ForkingRetry).
func (s *subscription) Retry(ctx context.Context, d *transport.Delivery, env *envelopepb.Envelope) error {
	e := entryOf(d)
	body, err := envelope.Marshal(env)
	if err != nil {
		return err
	}
	topic := e.topic
	if topic == "" {
		topic = env.GetTopic()
	}
	r := &kgo.Record{Topic: s.t.retryTopic(s.group, topic), Key: []byte(env.GetBizKey()), Value: body,
		Headers: []kgo.RecordHeader{{Key: headerTopic, Value: []byte(topic)}}}
	if err := s.t.produce(ctx, r); err != nil {
		return err
	}
	s.settle(e)
	s.commitNow(ctx, e)
	return nil
}

// DeadLetter writes rec to the dead-letter topic of d's topic (value: the
// delivered bytes; metadata in headers), waits for the broker's
// acknowledgement, then settles d.
func (s *subscription) DeadLetter(ctx context.Context, d *transport.Delivery, rec *dlq.Record) error {
	e := entryOf(d)
	r := *rec
	if r.Topic == "" {
		r.Topic = e.topic
	}
	if r.Envelope == nil {
		r.Envelope = d.Body
	}
	if err := s.t.produce(ctx, deadLetterRecord(s.t.dlqTopic(r.Topic), &r)); err != nil {
		return err
	}
	s.settle(e)
	s.commitNow(ctx, e)
	return nil
}

// commitNow commits e's partition at once instead of at the next tick.
// Retries and dead letters are rare and re-running them after a crash is
// costly (the handler runs again at the old retry_count, a second dead
// letter is written), so their offsets do not wait for CommitInterval.
func (s *subscription) commitNow(ctx context.Context, e *entry) {
	ctx, cancel := context.WithTimeout(ctx, s.t.cfg.ConnectTimeout)
	defer cancel()
	s.commit(ctx, map[tp]bool{e.ps.tp: true})
}

var _ transport.Extender = (*subscription)(nil)

// Lease implements transport.Extender: Config.Lease.
func (s *subscription) Lease() time.Duration { return s.t.cfg.Lease }

// Extend renews the in-process leases of ds.
func (s *subscription) Extend(_ context.Context, ds ...*transport.Delivery) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	until := time.Now().Add(s.t.cfg.Lease)
	for _, d := range ds {
		if e := entryOf(d); e.inflight {
			e.lease = until
		}
	}
	return nil
}

// Close stops fetching, commits what is settled and leaves the group;
// unsettled records go to the partitions' next owners.
func (s *subscription) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.notify()
	s.mu.Unlock()
	s.stop()
	s.loops.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), s.t.cfg.ConnectTimeout)
	defer cancel()
	s.commit(ctx, nil)
	s.cl.Close() // leaves the group; revoked runs and finds nothing to wait for
	return nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// commitLoop commits settled offsets every CommitInterval.
func (s *subscription) commitLoop(ctx context.Context) {
	defer s.loops.Done()
	t := time.NewTicker(s.t.cfg.CommitInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.commit(ctx, nil)
		}
	}
}

// commit commits the commit points of only (every partition when nil)
// that moved since their last commit, and waits for the answer.
func (s *subscription) commit(ctx context.Context, only map[tp]bool) {
	offsets := map[string]map[int32]kgo.EpochOffset{}
	var states []*partState
	s.mu.Lock()
	for k, ps := range s.parts {
		if (only == nil || only[k]) && !ps.gone && ps.next > ps.committed {
			if offsets[k.topic] == nil {
				offsets[k.topic] = map[int32]kgo.EpochOffset{}
			}
			offsets[k.topic][k.part] = kgo.EpochOffset{Epoch: ps.epoch, Offset: ps.next}
			states = append(states, ps)
		}
	}
	s.mu.Unlock()
	if len(offsets) == 0 {
		return
	}
	s.cl.CommitOffsetsSync(ctx, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err == nil {
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode != 0 {
						err = fmt.Errorf("%s[%d]: error code %d", t.Topic, p.Partition, p.ErrorCode)
					}
				}
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				s.t.cfg.Logger.Warn("msgcontract: kafka commit failed; the records will be redelivered and deduplicated",
					"group", s.group, "error", err)
			}
			return
		}
		s.mu.Lock()
		for _, ps := range states {
			ps.committed = max(ps.committed, offsets[ps.tp.topic][ps.tp.part].Offset)
		}
		s.mu.Unlock()
	})
}

func (s *subscription) assigned(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for topic, parts := range m {
		for _, p := range parts {
			k := tp{topic, p}
			s.parts[k] = &partState{tp: k, next: -1, epoch: -1, committed: -1}
		}
	}
}

// revoked stops handing out the partitions' records, waits (at most
// RevokeWait) for the in-flight ones to settle, commits and releases them.
func (s *subscription) revoked(ctx context.Context, _ *kgo.Client, m map[string][]int32) {
	only := s.mark(m)
	deadline := time.Now().Add(s.t.cfg.RevokeWait)
	for {
		s.mu.Lock()
		busy := false
		for e := range s.inflight {
			busy = busy || only[e.ps.tp]
		}
		wake, closed := s.wake, s.closed
		s.mu.Unlock()
		if !busy || closed || time.Now().After(deadline) {
			break
		}
		timer := time.NewTimer(time.Until(deadline))
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
		}
		timer.Stop()
	}
	cctx, cancel := context.WithTimeout(ctx, s.t.cfg.ConnectTimeout)
	s.commit(cctx, only)
	cancel()
	s.release(only)
}

// lost releases the partitions without committing: another member owns
// them already.
func (s *subscription) lost(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	s.release(s.mark(m))
}

func (s *subscription) mark(m map[string][]int32) map[tp]bool {
	only := map[tp]bool{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for topic, parts := range m {
		for _, p := range parts {
			k := tp{topic, p}
			only[k] = true
			if ps := s.parts[k]; ps != nil {
				ps.draining = true
			}
		}
	}
	return only
}

func (s *subscription) release(only map[tp]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range only {
		ps := s.parts[k]
		if ps == nil {
			continue
		}
		ps.gone = true
		for _, e := range ps.q {
			if e.timer != nil {
				e.timer.Stop()
			}
			delete(s.inflight, e)
			if !e.settled {
				s.unkey(e)
			}
		}
		s.buffered -= len(ps.q)
		ps.q = nil
		delete(s.parts, k)
		if s.t.lag != nil { // another member reports it now
			s.t.lag.DeleteLabelValues(s.group, k.topic, strconv.Itoa(int(k.part)))
		}
	}
	s.notify()
}
