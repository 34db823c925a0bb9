package sqlitequeue

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// ErrLeaseLost is returned when settling a delivery whose lease expired
// and which another fetch has taken since. The other holder processes the
// message; dedup makes that safe.
var ErrLeaseLost = errors.New("sqlitequeue: lease lost")

// handle is a delivery's transport state.
type handle struct {
	row   int64
	owner string
}

// Subscribe registers group on topics (durably: messages published from
// now on are kept for it) and returns its subscription. Rows published to
// a topic before any group subscribed are adopted by this group.
func (t *Transport) Subscribe(ctx context.Context, group string, topics []string) (transport.Subscription, error) {
	if group == "" || len(topics) == 0 {
		return nil, errors.New("sqlitequeue: Subscribe needs a group and at least one topic")
	}
	tx, err := t.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlitequeue: subscribe: %w", err)
	}
	defer tx.Rollback()
	now := t.cfg.Now().UnixMilli()
	for _, topic := range topics {
		if _, err := tx.ExecContext(ctx, `INSERT INTO mc_subscriptions (topic, grp, created_at) VALUES (?1, ?2, ?3)
			ON CONFLICT (topic, grp) DO NOTHING`, topic, group, now); err != nil {
			return nil, fmt.Errorf("sqlitequeue: subscribe: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE mc_queue SET grp = ?1 WHERE topic = ?2 AND grp = ''`, group, topic); err != nil {
			return nil, fmt.Errorf("sqlitequeue: subscribe: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("sqlitequeue: subscribe: %w", err)
	}
	args := []any{group}
	ph := make([]string, len(topics))
	for i, tp := range topics {
		args = append(args, tp)
		ph[i] = "?" + strconv.Itoa(i+2)
	}
	in := strings.Join(ph, ", ")
	n := len(topics) + 2 // next placeholder number
	p := func(k int) string { return "?" + strconv.Itoa(n+k) }
	// With one topic every row's topic is known: it is not read back (a
	// column and a string a row).
	topicCol, one := "topic, ", ""
	if len(topics) == 1 {
		topicCol, one = "", topics[0]
	}
	return &subscription{
		t:     t,
		group: group,
		token: event.NewMessageID()[:16],
		args:  slices.Clip(args), // workers append to it concurrently
		topic: one,
		probe: `SELECT 1 FROM mc_queue WHERE grp = ?1 AND topic IN (` + in + `) AND not_before <= ` + p(0) +
			` AND lease_until <= ` + p(0) + ` LIMIT 1`,
		read: `SELECT id, msg_id, ` + topicCol + `body, deliveries + 1 FROM mc_queue WHERE grp = ?1 AND topic IN (` + in + `)
			AND not_before <= ` + p(0) + ` AND lease_until <= ` + p(0) + ` ORDER BY id LIMIT ` + p(1),
		claim: `UPDATE mc_queue SET lease_owner = ` + p(1) + `, lease_until = ` + p(2) + `, deliveries = deliveries + 1
			WHERE id IN (SELECT id FROM mc_queue WHERE grp = ?1 AND topic IN (` + in + `) AND not_before <= ` + p(0) +
			` AND lease_until <= ` + p(0) + ` ORDER BY id LIMIT ` + p(3) + `)
			RETURNING id, msg_id, ` + topicCol + `body, deliveries`,
	}, nil
}

type subscription struct {
	t            *Transport
	group, token string
	seq          atomic.Int64
	args         []any
	topic        string // the one topic subscribed to; "" for several
	probe, claim string
	read         string // FetchTx's
	closed       atomic.Bool
}

// Fetch leases up to max ready rows, oldest first.
func (s *subscription) Fetch(ctx context.Context, max int) ([]*transport.Delivery, error) {
	var ds []*transport.Delivery
	err := s.poll(ctx, func() (bool, error) {
		var err error
		ds, err = s.tryFetch(ctx, max)
		return len(ds) > 0, err
	})
	return ds, err
}

// poll calls try until it reports success or fails, waiting between calls
// for a publish through this Transport or PollInterval.
func (s *subscription) poll(ctx context.Context, try func() (bool, error)) error {
	for {
		if s.closed.Load() {
			return transport.ErrClosed
		}
		wake, closed := s.t.wakeChan()
		if closed {
			return transport.ErrClosed
		}
		if ok, err := try(); err != nil || ok {
			return err
		}
		timer := time.NewTimer(s.t.cfg.PollInterval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}

var _ transport.TxFetcher = (*subscription)(nil)

// Ready implements transport.TxFetcher: it waits until a row is ready.
func (s *subscription) Ready(ctx context.Context) error {
	return s.poll(ctx, func() (bool, error) { return s.ready(ctx) })
}

func (s *subscription) ready(ctx context.Context) (bool, error) {
	var one int
	err := s.t.db.QueryRowContext(ctx, s.probe, append(s.args, s.t.cfg.Now().UnixMilli())...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlitequeue: fetch: %w", err)
	}
	return true, nil
}

// FetchTx implements transport.TxFetcher: it reads up to max ready rows,
// oldest first, in tx, and writes nothing.
func (s *subscription) FetchTx(ctx context.Context, tx *sql.Tx, max int) ([]*transport.Delivery, error) {
	rows, err := tx.QueryContext(ctx, s.read, append(s.args, s.t.cfg.Now().UnixMilli(), max)...)
	if err != nil {
		return nil, fmt.Errorf("sqlitequeue: fetch: %w", err)
	}
	return scanDeliveries(rows, "", s.topic)
}

// LeaseTx implements transport.TxFetcher.
func (s *subscription) LeaseTx(ctx context.Context, tx *sql.Tx, ds ...*transport.Delivery) error {
	owner := s.owner()
	ids := make([]int64, len(ds))
	for i, d := range ds {
		ids[i] = d.Handle.(*handle).row
	}
	js := idList(ids)
	lease := s.t.cfg.Now().Add(s.t.cfg.Lease).UnixMilli()
	if _, err := tx.ExecContext(ctx, `UPDATE mc_queue SET lease_owner = ?1, lease_until = ?2, deliveries = deliveries + 1
		WHERE id IN (SELECT value FROM json_each(?3))`, owner, lease, js); err != nil {
		return fmt.Errorf("sqlitequeue: lease: %w", err)
	}
	for _, d := range ds {
		d.Handle = &handle{row: d.Handle.(*handle).row, owner: owner}
	}
	return nil
}

func (s *subscription) owner() string { return s.token + ":" + strconv.FormatInt(s.seq.Add(1), 10) }

func (s *subscription) tryFetch(ctx context.Context, max int) ([]*transport.Delivery, error) {
	if ok, err := s.ready(ctx); err != nil || !ok {
		return nil, err
	}
	now := s.t.cfg.Now().UnixMilli()
	owner := s.owner()
	lease := s.t.cfg.Now().Add(s.t.cfg.Lease).UnixMilli()
	rows, err := s.t.db.QueryContext(ctx, s.claim, append(s.args, now, owner, lease, max)...)
	if err != nil {
		return nil, fmt.Errorf("sqlitequeue: fetch: %w", err)
	}
	return scanDeliveries(rows, owner, s.topic)
}

// scanDeliveries reads rows of (id, msg_id, topic, body, deliveries) into
// deliveries held by owner ("": by the reading transaction), closing rows;
// with topic set, the rows have no topic column and are all topic's.
func scanDeliveries(rows *sql.Rows, owner, topic string) ([]*transport.Delivery, error) {
	defer rows.Close()
	// Deliveries and their handles are allocated in chunks (4, 8, 16,
	// then 32 rows), not two objects a row; a chunk never moves, so the
	// pointers hold.
	var ds []*transport.Delivery
	var chunk []fetched
	for rows.Next() {
		if len(chunk) == cap(chunk) {
			chunk = make([]fetched, 0, min(max(2*cap(chunk), 4), 32))
		}
		chunk = chunk[:len(chunk)+1]
		f := &chunk[len(chunk)-1]
		d := &f.d
		var err error
		if topic != "" {
			d.Topic = topic
			err = rows.Scan(&d.Offset, &d.ID, &d.Body, &d.Attempt)
		} else {
			err = rows.Scan(&d.Offset, &d.ID, &d.Topic, &d.Body, &d.Attempt)
		}
		if err != nil {
			return nil, fmt.Errorf("sqlitequeue: fetch: %w", err)
		}
		f.h = handle{row: d.Offset, owner: owner}
		d.Handle = &f.h
		ds = append(ds, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitequeue: fetch: %w", err)
	}
	sortByOffset(ds)
	return ds, nil
}

// idList is ids as a JSON array, for json_each.
func idList(ids []int64) string {
	b := make([]byte, 0, 2+12*len(ids))
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// fetched is a delivery with its handle.
type fetched struct {
	d transport.Delivery
	h handle
}

// Ack deletes the deliveries' rows, one statement per fetch they came
// from. Rows whose lease was lost are left to their new holder. Rows read
// by FetchTx (owner "") are deleted unconditionally: only AckTx in their
// transaction, which holds the write lock, settles them.
func (s *subscription) Ack(ctx context.Context, ds ...*transport.Delivery) error {
	return s.ack(ctx, s.t.db, ds)
}

var _ transport.TxAcker = (*subscription)(nil)

// AckDB implements transport.TxAcker: the queue's database.
func (s *subscription) AckDB() *sql.DB { return s.t.db }

// AckTx implements transport.TxAcker: Ack inside the caller's transaction.
func (s *subscription) AckTx(ctx context.Context, tx *sql.Tx, ds ...*transport.Delivery) error {
	return s.ack(ctx, tx, ds)
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func (s *subscription) ack(ctx context.Context, db execer, ds []*transport.Delivery) error {
	if len(ds) == 1 {
		h := ds[0].Handle.(*handle)
		if _, err := db.ExecContext(ctx, `DELETE FROM mc_queue WHERE id = ?1 AND (lease_owner = ?2 OR ?2 = '')`,
			h.row, h.owner); err != nil {
			return fmt.Errorf("sqlitequeue: ack: %w", err)
		}
		return nil
	}
	byOwner := map[string][]int64{}
	var owners []string
	for _, d := range ds {
		h := d.Handle.(*handle)
		if _, ok := byOwner[h.owner]; !ok {
			owners = append(owners, h.owner)
		}
		byOwner[h.owner] = append(byOwner[h.owner], h.row)
	}
	for _, o := range owners {
		ids := idList(byOwner[o])
		if _, err := db.ExecContext(ctx, `DELETE FROM mc_queue WHERE (lease_owner = ?1 OR ?1 = '')
			AND id IN (SELECT value FROM json_each(?2))`, o, ids); err != nil {
			return fmt.Errorf("sqlitequeue: ack: %w", err)
		}
	}
	return nil
}

// Defer releases the lease and delays the row until until.
func (s *subscription) Defer(ctx context.Context, d *transport.Delivery, until time.Time) error {
	h := d.Handle.(*handle)
	_, err := s.t.db.ExecContext(ctx, `UPDATE mc_queue SET not_before = ?1, lease_owner = '', lease_until = 0
		WHERE id = ?2 AND lease_owner = ?3`, until.UnixMilli(), h.row, h.owner)
	if err != nil {
		return fmt.Errorf("sqlitequeue: defer: %w", err)
	}
	return nil
}

// Retry enqueues env for this group under a fresh id and deletes d's row,
// in one transaction.
func (s *subscription) Retry(ctx context.Context, d *transport.Delivery, env *envelopepb.Envelope) error {
	body, err := envelope.Marshal(env)
	if err != nil {
		return fmt.Errorf("sqlitequeue: retry: %w", err)
	}
	topic := d.Topic // where this group receives it
	if topic == "" {
		topic = env.GetTopic()
	}
	return s.settle(ctx, d, func(tx *sql.Tx) error {
		return s.t.enqueue(ctx, tx, topic, s.group, body, env.GetNotBefore())
	})
}

// DeadLetter moves d to the dead-letter table in one transaction.
func (s *subscription) DeadLetter(ctx context.Context, d *transport.Delivery, rec *dlq.Record) error {
	return s.settle(ctx, d, func(tx *sql.Tx) error { return insertDeadLetter(ctx, tx, rec) })
}

// settle runs write and deletes d's row in one transaction; it fails with
// ErrLeaseLost, writing nothing, when the row is no longer d's.
func (s *subscription) settle(ctx context.Context, d *transport.Delivery, write func(tx *sql.Tx) error) error {
	h := d.Handle.(*handle)
	tx, err := s.t.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitequeue: settle: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM mc_queue WHERE id = ?1 AND lease_owner = ?2`, h.row, h.owner)
	if err != nil {
		return fmt.Errorf("sqlitequeue: settle: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return ErrLeaseLost
	}
	if err := write(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitequeue: settle: %w", err)
	}
	s.t.notify()
	return nil
}

// Close stops Fetch; unsettled deliveries come back when their lease
// expires.
func (s *subscription) Close() error {
	s.closed.Store(true)
	return nil
}

var _ transport.Extender = (*subscription)(nil)

// Lease implements transport.Extender.
func (s *subscription) Lease() time.Duration { return s.t.cfg.Lease }

// Extend implements transport.Extender. Rows whose lease was lost are
// left alone.
func (s *subscription) Extend(ctx context.Context, ds ...*transport.Delivery) error {
	until := s.t.cfg.Now().Add(s.t.cfg.Lease).UnixMilli()
	for _, d := range ds {
		h := d.Handle.(*handle)
		if _, err := s.t.db.ExecContext(ctx, `UPDATE mc_queue SET lease_until = ?1 WHERE id = ?2 AND lease_owner = ?3`,
			until, h.row, h.owner); err != nil {
			return fmt.Errorf("sqlitequeue: extend: %w", err)
		}
	}
	return nil
}

// sortByOffset orders deliveries by queue row id: RETURNING promises no
// order.
func sortByOffset(ds []*transport.Delivery) {
	slices.SortFunc(ds, func(a, b *transport.Delivery) int { return cmp.Compare(a.Offset, b.Offset) })
}
