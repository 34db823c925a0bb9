package kafka

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

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
)

// headerDLQ holds a dead-letter record's metadata as JSON (dlq.Record
// without id and envelope); the record's value is the envelope's bytes.
const headerDLQ = "msgcontract.dlq"

var _ dlq.Store = (*Transport)(nil)

func deadLetterRecord(topic string, rec *dlq.Record) *kgo.Record {
	meta := *rec
	meta.ID, meta.Envelope = "", nil
	meta.ReplayCount, meta.LastReplayedAt = 0, time.Time{}
	js, _ := json.Marshal(&meta) // a struct of strings, numbers and times: cannot fail
	return &kgo.Record{Topic: topic, Key: []byte(rec.BizKey), Value: rec.Envelope,
		Headers: []kgo.RecordHeader{{Key: headerDLQ, Value: js}, {Key: headerTopic, Value: []byte(rec.Topic)}}}
}

// opState is a dead-letter record's mutable state, kept in the compacted
// "<topic>.dlq.ops" topic under the record's id: the last value wins.
type opState struct {
	ReplayCount    int       `json:"replay_count"`
	LastReplayedAt time.Time `json:"last_replayed_at"`
	Purged         bool      `json:"purged"`
}

// recordID is "<topic>/<partition>/<offset>": a record's place, the ID of
// a delivery and of a dead letter (in the dead-letter topic).
func recordID(topic string, p int32, off int64) string {
	return topic + "/" + strconv.FormatInt(int64(p), 10) + "/" + strconv.FormatInt(off, 10)
}

func parseID(id string) (topic string, ok bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || parts[0] == "" {
		return "", false
	}
	if _, err := strconv.ParseInt(parts[1], 10, 32); err != nil {
		return "", false
	}
	if _, err := strconv.ParseInt(parts[2], 10, 64); err != nil {
		return "", false
	}
	return parts[0], true
}

// List returns the matching records of the dead-letter topics (of
// f.Topic, or of every "<topic>.dlq" under the namespace), oldest first.
// Ids are "<topic>/<partition>/<offset>".
func (t *Transport) List(ctx context.Context, f dlq.Filter) ([]dlq.Record, error) {
	topics := []string{f.Topic}
	if f.Topic == "" {
		var err error
		if topics, err = t.dlqTopics(ctx); err != nil {
			return nil, err
		}
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	var out []dlq.Record
	for _, topic := range topics {
		recs, err := t.readDLQ(ctx, topic)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if f.Matches(&r) {
				out = append(out, r)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b dlq.Record) int { return a.DeadAt.Compare(b.DeadAt) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// dlqTopics lists the user topics that have a dead-letter topic.
func (t *Transport) dlqTopics(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, t.cfg.ConnectTimeout)
	defer cancel()
	details, err := t.adm.ListTopics(ctx)
	if err != nil {
		return nil, t.unreachable(err)
	}
	var out []string
	for name, d := range details {
		if d.Err == nil && strings.HasPrefix(name, t.cfg.Namespace) && strings.HasSuffix(name, dlqSuffix) {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(name, t.cfg.Namespace), dlqSuffix))
		}
	}
	slices.Sort(out)
	return out, nil
}

// readDLQ reads topic's dead-letter topic and folds its ops topic in:
// purged records are left out. A record dead-lettered again because its
// offset was not committed before a crash or rebalance is a copy: same
// group, handler, reason, message id and delivered bytes, in the same
// partition (same key) after the first. Only the first is shown, and its
// state (replays, purge) stands for the copies.
func (t *Transport) readDLQ(ctx context.Context, topic string) ([]dlq.Record, error) {
	raw, err := t.readAll(ctx, t.dlqTopic(topic), true)
	if err != nil {
		return nil, err
	}
	ops, err := t.readOps(ctx, topic)
	if err != nil {
		return nil, err
	}
	var out []dlq.Record
	seen := map[string]bool{}
	for _, kr := range raw {
		id := recordID(topic, kr.Partition, kr.Offset)
		r := dlq.Record{Topic: topic}
		for _, h := range kr.Headers {
			if h.Key == headerDLQ {
				if err := json.Unmarshal(h.Value, &r); err != nil {
					return nil, fmt.Errorf("kafka: dead-letter record %s: metadata header: %w", id, err)
				}
			}
		}
		copyOf := strings.Join([]string{r.Group, r.Handler, string(r.Reason), r.MessageID, string(kr.Value)}, "\x00")
		if seen[copyOf] {
			continue
		}
		seen[copyOf] = true
		st := ops[id]
		if st.Purged {
			continue
		}
		r.ID, r.Envelope = id, kr.Value
		r.ReplayCount, r.LastReplayedAt = st.ReplayCount, st.LastReplayedAt
		out = append(out, r)
	}
	return out, nil
}

func (t *Transport) readOps(ctx context.Context, topic string) (map[string]opState, error) {
	raw, err := t.readAll(ctx, t.opsTopic(topic), false)
	if err != nil {
		return nil, err
	}
	ops := map[string]opState{}
	for _, kr := range raw {
		var st opState
		if err := json.Unmarshal(kr.Value, &st); err != nil {
			return nil, fmt.Errorf("kafka: %s offset %d: %w", kr.Topic, kr.Offset, err)
		}
		ops[string(kr.Key)] = st
	}
	return ops, nil
}

// readAll reads every record of name up to its current end. A missing
// topic is an error when required, empty otherwise.
func (t *Transport) readAll(ctx context.Context, name string, required bool) ([]*kgo.Record, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*t.cfg.ConnectTimeout)
	defer cancel()
	details, err := t.adm.ListTopics(ctx, name)
	if err != nil {
		return nil, t.unreachable(err)
	}
	if d, ok := details[name]; !ok || d.Err != nil {
		if required && (!ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition)) {
			return nil, fmt.Errorf("kafka: topic %s does not exist on %s: no message of that topic was dead-lettered "+
				"through msgcontract (check --topic and the namespace)", name, strings.Join(t.cfg.Brokers, ","))
		}
		return nil, nil // being created: nothing in it yet
	}
	starts, err := t.adm.ListStartOffsets(ctx, name)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("kafka: read %s: %w", name, err)
	}
	ends, err := t.adm.ListEndOffsets(ctx, name)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("kafka: read %s: %w", name, err)
	}
	want := map[int32]kgo.Offset{}
	end := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		s, _ := starts.Lookup(o.Topic, o.Partition)
		if o.Offset > s.Offset {
			want[o.Partition] = kgo.NewOffset().At(s.Offset)
			end[o.Partition] = o.Offset
		}
	})
	if len(want) == 0 {
		return nil, nil
	}
	opts := append([]kgo.Opt{kgo.SeedBrokers(t.cfg.Brokers...), kgo.DialTimeout(t.cfg.ConnectTimeout)}, t.cfg.Opts...)
	opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{name: want}))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: read %s: %w", name, err)
	}
	defer cl.Close()
	var out []*kgo.Record
	for len(end) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("kafka: read %s: %d partitions not read to their end: %w", name, len(end), err)
		}
		fs.EachError(func(_ string, p int32, err error) {
			t.cfg.Logger.Warn("msgcontract: kafka read", "topic", name, "partition", p, "error", err)
		})
		fs.EachRecord(func(r *kgo.Record) {
			if e, ok := end[r.Partition]; ok && r.Offset < e {
				out = append(out, r)
			}
			if r.Offset >= end[r.Partition]-1 {
				delete(end, r.Partition)
			}
		})
	}
	slices.SortFunc(out, func(a, b *kgo.Record) int {
		return cmp.Or(cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Offset, b.Offset))
	})
	return out, nil
}

// Get returns the record with id "<topic>/<partition>/<offset>".
func (t *Transport) Get(ctx context.Context, id string) (*dlq.Record, error) {
	topic, ok := parseID(id)
	if !ok {
		return nil, fmt.Errorf("%w: id %q is not <topic>/<partition>/<offset>", dlq.ErrNotFound, id)
	}
	recs, err := t.readDLQ(ctx, topic)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		if recs[i].ID == id {
			return &recs[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %s (purged, expired, or never written)", dlq.ErrNotFound, id)
}

// Replay publishes the record's envelope, retry_count and not_before
// reset, to its group's retry topic (so no other group sees it again), and
// records the replay in the ops topic. The dead-letter record stays, with
// its replay count raised, until purged.
func (t *Transport) Replay(ctx context.Context, id string) error {
	r, err := t.Get(ctx, id)
	if err != nil {
		return err
	}
	env, body, err := dlq.ReplayEnvelope(r)
	if err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	if r.Group == "" {
		return fmt.Errorf("kafka: dlq replay %s: the record names no group", id)
	}
	retry := t.retryTopic(r.Group, r.Topic)
	if err := t.ensure(ctx, topicSpec{name: retry}); err != nil {
		return err
	}
	if err := t.produce(ctx, &kgo.Record{Topic: retry, Key: []byte(env.GetBizKey()), Value: body,
		Headers: []kgo.RecordHeader{{Key: headerTopic, Value: []byte(r.Topic)}}}); err != nil {
		return err
	}
	return t.writeOp(ctx, r.Topic, id, opState{ReplayCount: r.ReplayCount + 1, LastReplayedAt: t.cfg.Now().UTC()})
}

// Purge hides the matching records: a purged marker per record goes to the
// compacted ops topic, so the dead-letter topic is never rewritten; the
// records themselves leave it when its retention (DLQRetention) expires.
func (t *Transport) Purge(ctx context.Context, f dlq.Filter) (int, error) {
	f.Limit = 1 << 30
	recs, err := t.List(ctx, f)
	if err != nil {
		return 0, err
	}
	for i, r := range recs {
		st := opState{ReplayCount: r.ReplayCount, LastReplayedAt: r.LastReplayedAt, Purged: true}
		if err := t.writeOp(ctx, r.Topic, r.ID, st); err != nil {
			return i, fmt.Errorf("kafka: dlq purge %s: %w", r.ID, err)
		}
	}
	return len(recs), nil
}

func (t *Transport) writeOp(ctx context.Context, topic, id string, st opState) error {
	if err := t.ensure(ctx, t.opsSpec(topic)); err != nil {
		return err
	}
	js, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return t.produce(ctx, &kgo.Record{Topic: t.opsTopic(topic), Key: []byte(id), Value: js})
}
