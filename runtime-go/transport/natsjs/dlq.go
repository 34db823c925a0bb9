package natsjs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
)

var _ dlq.Store = (*Transport)(nil)

// List returns matching records of the dead-letter stream, oldest first.
// Record ids are stream sequence numbers. It reads the stream once through
// an ordered consumer, in batches, so its cost is linear in the records
// stored, whatever gaps replays and purges left in the sequence.
func (t *Transport) List(ctx context.Context, f dlq.Filter) ([]dlq.Record, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = dlq.DefaultLimit
	}
	info, err := t.dead.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("natsjs: dlq list: %w", err)
	}
	if info.State.Msgs == 0 {
		return nil, nil
	}
	last := info.State.LastSeq // records stored later are not listed
	cons, err := t.dead.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return nil, fmt.Errorf("natsjs: dlq list: %w", err)
	}
	var out []dlq.Record
	for {
		batch, err := cons.Fetch(listBatch, jetstream.FetchMaxWait(listWait))
		if err != nil {
			return nil, fmt.Errorf("natsjs: dlq list: %w", err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			md, err := m.Metadata()
			if err != nil {
				return nil, fmt.Errorf("natsjs: dlq list: %w", err)
			}
			seq := md.Sequence.Stream
			if seq > last {
				return out, nil
			}
			r, err := decodeRecord(seq, m.Data())
			if err != nil {
				return nil, err
			}
			if f.Matches(r) {
				out = append(out, *r)
			}
			if len(out) >= limit || seq == last || md.NumPending == 0 {
				return out, nil
			}
		}
		if err := batch.Error(); err != nil {
			return nil, fmt.Errorf("natsjs: dlq list: %w", err)
		}
		if n == 0 { // nothing more within listWait: the rest was deleted meanwhile
			return out, nil
		}
	}
}

// listBatch and listWait bound one pull of List's ordered consumer.
const (
	listBatch = 256
	listWait  = 2 * time.Second
)

// Get returns the record stored at sequence id.
func (t *Transport) Get(ctx context.Context, id string) (*dlq.Record, error) {
	seq, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: id %q is not a sequence number", dlq.ErrNotFound, id)
	}
	return t.get(ctx, seq)
}

func (t *Transport) get(ctx context.Context, seq uint64) (*dlq.Record, error) {
	m, err := t.dead.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, fmt.Errorf("%w: sequence %d", dlq.ErrNotFound, seq)
	}
	if err != nil {
		return nil, fmt.Errorf("natsjs: dlq get %d: %w", seq, err)
	}
	return decodeRecord(seq, m.Data)
}

func decodeRecord(seq uint64, data []byte) (*dlq.Record, error) {
	r := &dlq.Record{}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, fmt.Errorf("natsjs: dlq record %d: %w", seq, err)
	}
	r.ID = strconv.FormatUint(seq, 10)
	return r, nil
}

// Replay publishes the record's envelope, retry_count and not_before reset,
// on its group's retry subject (so no other group sees it again). Stream
// messages are immutable, so the record is stored again with its replay
// count raised, under a new id, and the old one deleted.
func (t *Transport) Replay(ctx context.Context, id string) error {
	r, err := t.Get(ctx, id)
	if err != nil {
		return err
	}
	_, body, err := dlq.ReplayEnvelope(r)
	if err != nil {
		return fmt.Errorf("natsjs: %w", err)
	}
	if err := t.publishRaw(ctx, t.retrySubject(r.Group, r.Topic), body); err != nil {
		return err
	}
	r.ReplayCount++
	r.LastReplayedAt = t.cfg.Now().UTC()
	old := r.ID
	r.ID = ""
	if err := t.publishJSON(ctx, t.dlqSubject(r), r); err != nil {
		return err
	}
	seq, _ := strconv.ParseUint(old, 10, 64)
	return t.dead.DeleteMsg(ctx, seq)
}

// Purge deletes matching records.
func (t *Transport) Purge(ctx context.Context, f dlq.Filter) (int, error) {
	f.Limit = 1 << 30
	recs, err := t.List(ctx, f)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range recs {
		seq, _ := strconv.ParseUint(r.ID, 10, 64)
		if err := t.dead.DeleteMsg(ctx, seq); err != nil {
			return n, fmt.Errorf("natsjs: dlq purge %s: %w", r.ID, err)
		}
		n++
	}
	return n, nil
}
