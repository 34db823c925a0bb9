package rabbitmq

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/event"
)

var _ dlq.Store = (*Transport)(nil)

// newRecordID is a dead-letter record id: the UTC time in microseconds,
// then random bits, so ids sort in the order records were stored.
func newRecordID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%016x-%s", now.UnixMicro(), hex.EncodeToString(b[:]))
}

// stored is one record taken from the dead-letter queue by scan.
type stored struct {
	rec *dlq.Record
	tag uint64
}

// scan takes every record of the dead-letter queue (basic.get, no
// auto-ack) on a channel of its own, lets fn remove (acknowledge) some,
// and hands the rest back (basic.nack, requeue). A crash in
// between hands them all back: nothing is lost. Two scans at once see
// each other's records missing, so dlq commands run one at a time.
func (t *Transport) scan(ctx context.Context, fn func(remove func(stored) error, recs []stored) error) error {
	ch, err := t.channel()
	if err != nil {
		return fmt.Errorf("rabbitmq: dlq: %w", err)
	}
	defer ch.Close() // hands back whatever is still unacknowledged
	var recs []stored
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, ok, err := ch.Get(t.n.dlq(), false)
		if err != nil {
			return fmt.Errorf("rabbitmq: dlq: read %s: %w", t.n.dlq(), err)
		}
		if !ok {
			break
		}
		r := &dlq.Record{}
		if err := json.Unmarshal(m.Body, r); err != nil {
			return fmt.Errorf("rabbitmq: dlq: record %s in %s is not a JSON dlq.Record: %w", m.MessageId, t.n.dlq(), err)
		}
		if r.ID == "" {
			r.ID = m.MessageId
		}
		recs = append(recs, stored{r, m.DeliveryTag})
	}
	slices.SortStableFunc(recs, func(a, b stored) int { return strings.Compare(a.rec.ID, b.rec.ID) })
	removed := map[uint64]bool{}
	ferr := fn(func(s stored) error {
		if err := ch.Ack(s.tag, false); err != nil {
			return err
		}
		removed[s.tag] = true
		return nil
	}, recs)
	// Hand back, with one basic.nack(multiple), every record up to the
	// highest one kept: naming a removed one would be refused (406) and
	// close the channel.
	var last uint64
	for _, s := range recs {
		if !removed[s.tag] {
			last = max(last, s.tag)
		}
	}
	if last > 0 {
		if err := ch.Nack(last, true, true); err != nil && ferr == nil {
			ferr = fmt.Errorf("rabbitmq: dlq: hand back the records: %w", err)
		}
		// basic.nack has no reply: a passive declare after it is answered
		// only if the broker took the nack, so a refusal shows here.
		if _, err := ch.QueueDeclarePassive(t.n.dlq(), true, false, false, false, nil); err != nil && ferr == nil {
			ferr = fmt.Errorf("rabbitmq: dlq: hand back the records: %w", err)
		}
	}
	return ferr
}

// List returns matching records, oldest first. It reads the whole
// dead-letter queue and hands it back (see scan).
func (t *Transport) List(ctx context.Context, f dlq.Filter) ([]dlq.Record, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = dlq.DefaultLimit
	}
	var out []dlq.Record
	err := t.scan(ctx, func(_ func(stored) error, recs []stored) error {
		for _, s := range recs {
			if len(out) >= limit {
				break
			}
			if f.Matches(s.rec) {
				out = append(out, *s.rec)
			}
		}
		return nil
	})
	return out, err
}

// Get returns the record with id.
func (t *Transport) Get(ctx context.Context, id string) (*dlq.Record, error) {
	var found *dlq.Record
	err := t.scan(ctx, func(_ func(stored) error, recs []stored) error {
		for _, s := range recs {
			if s.rec.ID == id {
				found = s.rec
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%w: no record %q in %s", dlq.ErrNotFound, id, t.n.dlq())
	}
	return found, nil
}

// Replay sends the record's envelope, retry_count and not_before reset,
// to its group's queue only (through the retry exchange), stores the
// record again with its replay count raised under a new id, and removes
// the old one, in that order: a crash in between leaves a duplicate,
// never a loss.
func (t *Transport) Replay(ctx context.Context, id string) error {
	return t.scan(ctx, func(remove func(stored) error, recs []stored) error {
		i := slices.IndexFunc(recs, func(s stored) bool { return s.rec.ID == id })
		if i < 0 {
			return fmt.Errorf("%w: no record %q in %s", dlq.ErrNotFound, id, t.n.dlq())
		}
		r := *recs[i].rec
		if err := checkGroup(r.Group); err != nil {
			return fmt.Errorf("rabbitmq: replay %s: %w", id, err)
		}
		_, body, err := dlq.ReplayEnvelope(&r)
		if err != nil {
			return fmt.Errorf("rabbitmq: replay %s: %w", id, err)
		}
		if err := t.declareGroup(ctx, r.Group, r.Topic); err != nil {
			return err
		}
		if err := t.publishToGroup(ctx, r.Group, r.Topic, body, event.NewMessageID(), 0); err != nil {
			return fmt.Errorf("rabbitmq: replay %s: %w", id, err)
		}
		r.ReplayCount++
		r.LastReplayedAt = t.cfg.Now().UTC()
		if err := t.storeRecord(ctx, &r); err != nil {
			return fmt.Errorf("rabbitmq: replay %s: store the replayed record: %w", id, err)
		}
		if err := remove(recs[i]); err != nil {
			return fmt.Errorf("rabbitmq: replay %s: remove the old record: %w", id, err)
		}
		return nil
	})
}

// Purge removes matching records.
func (t *Transport) Purge(ctx context.Context, f dlq.Filter) (int, error) {
	n := 0
	err := t.scan(ctx, func(remove func(stored) error, recs []stored) error {
		var errs []error
		for _, s := range recs {
			if !f.Matches(s.rec) {
				continue
			}
			if err := remove(s); err != nil {
				errs = append(errs, fmt.Errorf("rabbitmq: purge %s: %w", s.rec.ID, err))
				break
			}
			n++
		}
		return errors.Join(errs...)
	})
	return n, err
}
