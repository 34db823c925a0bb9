package rocketmq

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
)

var _ dlq.Store = (*Transport)(nil)

// A dead-letter record is one message of the msgcontract_dlq topic whose
// body is the dlq.Record's JSON form (without id); its id is
// "<queue>/<offset>" there. Replays and purges append a marker to
// msgcontract_dlq_ops (opState, JSON); the last marker of an id wins.
// RocketMQ deletes neither: records and markers leave with the broker's
// commit-log retention (fileReservedTime, 72 hours by default), so a
// dead-letter store that must keep records longer needs the broker's
// retention raised.
type opState struct {
	ID             string    `json:"id"`
	ReplayCount    int       `json:"replay_count"`
	LastReplayedAt time.Time `json:"last_replayed_at,omitzero"`
	Purged         bool      `json:"purged,omitempty"`
}

// storeRecord appends rec to the dead-letter topic.
func (t *Transport) storeRecord(ctx context.Context, rec *dlq.Record) error {
	r := *rec
	r.ID, r.ReplayCount, r.LastReplayedAt = "", 0, time.Time{}
	js, err := json.Marshal(&r)
	if err != nil {
		return fmt.Errorf("rocketmq: dead letter of %s: %w", rec.MessageID, err)
	}
	// The markers' topic too: tooling, which creates no topic, writes
	// there.
	if err := t.ensure(ctx, 1, typeNormal, t.dlqName(), t.opsName()); err != nil {
		return err
	}
	m := primitive.NewMessage(t.dlqName(), js)
	m.WithProperty(PropTopic, rec.Topic)
	if rec.BizKey != "" {
		m.WithKeys([]string{rec.BizKey, rec.MessageID})
	}
	return t.send(ctx, m)
}

func (t *Transport) writeOp(ctx context.Context, st opState) error {
	if err := t.ensure(ctx, 1, typeNormal, t.opsName()); err != nil {
		return err
	}
	js, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return t.send(ctx, primitive.NewMessage(t.opsName(), js))
}

// readAll returns every message of topic still on the brokers, in queue
// then offset order; none when the topic does not exist.
func (t *Transport) readAll(ctx context.Context, topic string) ([]*primitive.MessageExt, error) {
	qs, err := t.admin.FetchPublishMessageQueues(ctx, topic)
	if err != nil || len(qs) == 0 {
		return nil, nil // no route: no such topic, nothing stored
	}
	pc, err := rocketmq.NewPullConsumer(
		consumer.WithNsResolver(primitive.NewPassthroughResolver(t.cfg.NameServers)),
		consumer.WithGroupName(t.cfg.Namespace+"msgcontract_dlq_reader"),
		consumer.WithInstance(instanceName()))
	if err != nil {
		return nil, fmt.Errorf("rocketmq: dlq: reader: %w", err)
	}
	if err := pc.Subscribe(topic, consumer.MessageSelector{}); err != nil {
		return nil, fmt.Errorf("rocketmq: dlq: reader: %w", err)
	}
	if err := pc.Start(); err != nil {
		return nil, fmt.Errorf("rocketmq: dlq: start the reader: %w", err)
	}
	defer pc.Shutdown()
	slices.SortFunc(qs, func(a, b *primitive.MessageQueue) int {
		return cmp.Or(cmp.Compare(a.BrokerName, b.BrokerName), cmp.Compare(a.QueueId, b.QueueId))
	})
	var out []*primitive.MessageExt
	for _, q := range qs {
		// The end of the queue, without a pull: a pull at the end waits
		// (long polling) for a message to arrive.
		end, err := pc.OffsetForTimestamp(q, time.Now().Add(24*time.Hour).UnixMilli())
		if err != nil {
			return nil, fmt.Errorf("rocketmq: dlq: end of %s queue %d: %w", topic, q.QueueId, err)
		}
		for off := int64(0); off < end; {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r, err := pc.PullFrom(ctx, q, off, 32)
			if err != nil {
				return nil, fmt.Errorf("rocketmq: dlq: read %s queue %d at %d: %w", topic, q.QueueId, off, err)
			}
			for _, m := range r.GetMessageExts() {
				if m.Queue == nil {
					m.Queue = q
				}
				out = append(out, m)
			}
			if r.NextBeginOffset <= off {
				break // nothing further the broker will give
			}
			off = r.NextBeginOffset
		}
	}
	return out, nil
}

// records reads the dead-letter topic and folds the markers into it:
// every record not purged, oldest first. A record dead-lettered again
// because its queue's offset was not committed before a crash (the push
// client commits every few seconds) is a copy: same group, handler,
// reason, message id and delivered bytes, after the first. Only the first
// is listed, and its markers (replays, purge) stand for the copies.
func (t *Transport) records(ctx context.Context) ([]dlq.Record, error) {
	ops, err := t.readAll(ctx, t.opsName())
	if err != nil {
		return nil, err
	}
	state := map[string]opState{}
	for _, m := range ops {
		var st opState
		if err := json.Unmarshal(m.Body, &st); err != nil {
			return nil, fmt.Errorf("rocketmq: dlq: marker %s of %s is not JSON: %w", recordID(m), t.opsName(), err)
		}
		state[st.ID] = st
	}
	msgs, err := t.readAll(ctx, t.dlqName())
	if err != nil {
		return nil, err
	}
	out := make([]dlq.Record, 0, len(msgs))
	seen := map[string]bool{}
	add := func(id string, r dlq.Record) {
		copyOf := strings.Join([]string{r.Group, r.Handler, string(r.Reason), r.MessageID, string(r.Envelope)}, "\x00")
		if seen[copyOf] {
			return
		}
		seen[copyOf] = true
		st := state[id]
		if st.Purged {
			return
		}
		r.ID, r.ReplayCount, r.LastReplayedAt = id, st.ReplayCount, st.LastReplayedAt
		out = append(out, r)
	}
	for _, m := range msgs {
		id := recordID(m)
		var r dlq.Record
		if err := json.Unmarshal(m.Body, &r); err != nil {
			return nil, fmt.Errorf("rocketmq: dlq: record %s of %s is not a JSON dlq.Record: %w", id, t.dlqName(), err)
		}
		add(id, r)
	}
	broker, err := t.brokerDeadLetters(ctx)
	if err != nil {
		return nil, err
	}
	for _, b := range broker {
		add(b.id, b.rec)
	}
	slices.SortStableFunc(out, func(a, b dlq.Record) int { return a.DeadAt.Compare(b.DeadAt) })
	return out, nil
}

// brokerDLQPrefix starts the topics where RocketMQ itself moves a group's
// messages after its maximum reconsume count: %DLQ%<group>.
const brokerDLQPrefix = "%DLQ%"

type brokerRecord struct {
	id  string
	rec dlq.Record
}

// brokerDeadLetters reads the broker's own dead-letter topics of the
// namespace's groups, %DLQ%<group>, as dead-letter records: what a group
// handed back (RECONSUME_LATER) until the broker gave up, or what another
// RocketMQ consumer of the group, retrying on the broker's delay levels,
// gave up on. Their ids are "%DLQ%<group>/<queue>/<offset>"; replay and
// purge mark them as they mark the transport's own records.
func (t *Transport) brokerDeadLetters(ctx context.Context) ([]brokerRecord, error) {
	list, err := t.admin.FetchAllTopicList(ctx)
	if err != nil {
		return nil, fmt.Errorf("rocketmq: dlq: list the topics: %w", err)
	}
	prefix := brokerDLQPrefix + t.cfg.Namespace
	var topics []string
	for _, name := range list.TopicList {
		if strings.HasPrefix(name, prefix) {
			topics = append(topics, name)
		}
	}
	slices.Sort(topics)
	var out []brokerRecord
	for _, topic := range topics {
		msgs, err := t.readAll(ctx, topic)
		if err != nil {
			return nil, err
		}
		group := strings.TrimPrefix(topic, prefix)
		for _, m := range msgs {
			out = append(out, brokerRecord{id: topic + "/" + recordID(m), rec: t.brokerRecord(group, m)})
		}
	}
	return out, nil
}

// brokerRecord describes m, a message of group's %DLQ% topic, as a
// dead-letter record: its body is the envelope as delivered.
func (t *Transport) brokerRecord(group string, m *primitive.MessageExt) dlq.Record {
	topic := m.GetProperty(PropTopic)
	if topic == "" {
		topic = strings.TrimPrefix(m.GetProperty(primitive.PropertyRetryTopic), t.cfg.Namespace)
	}
	at := time.UnixMilli(m.StoreTimestamp).UTC()
	r := dlq.Record{Topic: topic, Group: group, Envelope: m.Body, Reason: dlq.ReasonRetriesExhausted,
		Error:    fmt.Sprintf("RocketMQ moved it to %s%s%s after %d reconsumes", brokerDLQPrefix, t.cfg.Namespace, group, m.ReconsumeTimes),
		Attempts: int(m.ReconsumeTimes) + 1, LastFailedAt: at, DeadAt: at}
	if env, err := envelope.Unmarshal(m.Body); err == nil {
		r.EventType, r.BizKey, r.MessageID = env.GetEventType(), env.GetBizKey(), env.GetMessageId()
		if r.Topic == "" {
			r.Topic = env.GetTopic()
		}
	} else {
		r.Reason = dlq.ReasonDecode
	}
	return r
}

// recordID is "<queue>/<offset>" of a message in the dead-letter topic.
func recordID(m *primitive.MessageExt) string {
	q := int64(0)
	if m.Queue != nil {
		q = int64(m.Queue.QueueId)
	}
	return strconv.FormatInt(q, 10) + "/" + strconv.FormatInt(m.QueueOffset, 10)
}

// List returns matching records, oldest first.
func (t *Transport) List(ctx context.Context, f dlq.Filter) ([]dlq.Record, error) {
	recs, err := t.records(ctx)
	if err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = dlq.DefaultLimit
	}
	var out []dlq.Record
	for i := range recs {
		if len(out) >= limit {
			break
		}
		if f.Matches(&recs[i]) {
			out = append(out, recs[i])
		}
	}
	return out, nil
}

// Get returns the record with id.
func (t *Transport) Get(ctx context.Context, id string) (*dlq.Record, error) {
	own := strings.TrimPrefix(id, brokerDLQPrefix)
	if own != id { // %DLQ%<group>/<queue>/<offset>
		if i := strings.Index(own, "/"); i > 0 {
			own = own[i+1:]
		}
	}
	if q, off, ok := strings.Cut(own, "/"); !ok || !isNumber(q) || !isNumber(off) {
		return nil, fmt.Errorf("%w: %q is not a RocketMQ dead-letter id (<queue>/<offset>, or %%DLQ%%<group>/<queue>/<offset>)", dlq.ErrNotFound, id)
	}
	recs, err := t.records(ctx)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		if recs[i].ID == id {
			return &recs[i], nil
		}
	}
	return nil, fmt.Errorf("%w: no record %q in %s", dlq.ErrNotFound, id, t.dlqName())
}

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 63)
	return err == nil
}

// Replay sends the record's envelope, retry_count and not_before reset,
// to its group's retry topic only, then marks the record replayed: a
// crash in between replays it once more, never loses it.
func (t *Transport) Replay(ctx context.Context, id string) error {
	r, err := t.Get(ctx, id)
	if err != nil {
		return err
	}
	if r.Group == "" {
		return fmt.Errorf("rocketmq: dlq replay %s: the record names no group", id)
	}
	env, body, err := dlq.ReplayEnvelope(r)
	if err != nil {
		return fmt.Errorf("rocketmq: %w", err)
	}
	if err := t.ensure(ctx, 1, typeNormal, t.opsName()); err != nil {
		return fmt.Errorf("rocketmq: dlq replay %s: %w", id, err)
	}
	if err := t.publishCopy(ctx, r.Group, r.Topic, env, body, time.Time{}); err != nil {
		return fmt.Errorf("rocketmq: dlq replay %s: %w", id, err)
	}
	return t.writeOp(ctx, opState{ID: id, ReplayCount: r.ReplayCount + 1, LastReplayedAt: t.cfg.Now().UTC()})
}

// Purge hides the matching records with a purged marker each.
func (t *Transport) Purge(ctx context.Context, f dlq.Filter) (int, error) {
	recs, err := t.records(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, r := range recs {
		if !f.Matches(&r) {
			continue
		}
		st := opState{ID: r.ID, ReplayCount: r.ReplayCount, LastReplayedAt: r.LastReplayedAt, Purged: true}
		if err := t.writeOp(ctx, st); err != nil {
			errs = append(errs, fmt.Errorf("rocketmq: dlq purge %s: %w", r.ID, err))
			break
		}
		n++
	}
	return n, errors.Join(errs...)
}
