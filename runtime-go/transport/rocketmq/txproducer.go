package rocketmq

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/txcheck"
)

// TxConfig configures a TxProducer.
type TxConfig struct {
	// DB is the business database: Send runs the business transaction on
	// it, and the check-back reads txcheck.Table from it.
	DB *sql.DB
	// Dialect is DB's SQL dialect.
	Dialect sqldb.Dialect
	// Topics are the msgcontract topics the producer sends to.
	// NewTxProducer creates them (message type TRANSACTION) and announces
	// the producer to their brokers, so that a restarted producer answers
	// the check-backs of its predecessor's half messages before it sends
	// anything itself.
	Topics []string
	// Group is the producer group, under Config.Namespace: the broker
	// sends a check-back to any live producer of the group, so every
	// process sending for one business database must share it (and no
	// other database's producers). Defaults to "msgcontract_tx".
	Group string
	// Unresolved is how long after a half message is stored a check-back
	// that finds no row still answers UNKNOWN; Send commits the business
	// transaction only within half of it. Defaults to
	// txcheck.DefaultUnresolved (1 min).
	Unresolved time.Duration
	// Logger defaults to the transport's Config.Logger.
	Logger *slog.Logger
}

// Validate reports a missing database or dialect.
func (c *TxConfig) Validate() error {
	if c.DB == nil {
		return errors.New("rocketmq: TxConfig.DB is required: the business database the check-back answers from")
	}
	if err := c.Dialect.Validate(); err != nil {
		return fmt.Errorf("rocketmq: TxConfig.Dialect: %w", err)
	}
	if len(c.Topics) == 0 {
		return errors.New("rocketmq: TxConfig.Topics is empty: name the topics the producer sends to")
	}
	if c.Unresolved < 0 {
		return fmt.Errorf("rocketmq: TxConfig.Unresolved is %v: it must be positive", c.Unresolved)
	}
	return nil
}

// TxProducer sends events as RocketMQ transactional (half) messages: the
// alternative to the outbox on RocketMQ. The broker keeps a half message
// from consumers until the producer commits it, which Send does exactly
// when the business transaction commits; a verdict lost to a crash is
// asked for again by the broker's check-back, which a TxProducer of the
// same group answers from txcheck.Table (see package txcheck).
//
// Against the outbox: no relay and no outbox table to drain, and the
// event leaves at once; but the broker must be up for the business
// transaction to start (Send fails before running it otherwise), the
// send is a broker round trip inside the request, and a TxProducer of
// the group must be running for a lost verdict to be resolved.
type TxProducer struct {
	t    *Transport
	cfg  TxConfig
	prod rocketmq.TransactionProducer

	mu      sync.Mutex
	pending map[*primitive.Message]*txSend

	// crash, set by tests, simulates a process that dies after the
	// business transaction commits (or rolls back) and before the
	// verdict reaches the broker.
	crash atomic.Bool
	// checked, set by tests, receives every check-back's answer.
	checked atomic.Pointer[chan<- txcheck.Answer]

	pruneMu   sync.Mutex
	lastPrune time.Time
}

// txSend is one Send's business transaction, run by the client's
// ExecuteLocalTransaction call on Send's goroutine.
type txSend struct {
	ctx    context.Context
	work   func(context.Context, *sql.Tx) error
	stored time.Time
	id     string
	topic  string
	err    error
}

// NewTxProducer starts a transactional producer. Its topics are created
// (when Config.CreateTopics is on) with message type TRANSACTION, which
// a 5.x Java or Python producer of the same topic needs. Migrate the
// table first: txcheck.Migrate.
func (t *Transport) NewTxProducer(ctx context.Context, cfg TxConfig) (*TxProducer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Group == "" {
		cfg.Group = "msgcontract_tx"
	}
	if cfg.Unresolved == 0 {
		cfg.Unresolved = txcheck.DefaultUnresolved
	}
	if cfg.Logger == nil {
		cfg.Logger = t.cfg.Logger
	}
	p := &TxProducer{t: t, cfg: cfg, pending: map[*primitive.Message]*txSend{}}
	prod, err := rocketmq.NewTransactionProducer(txListener{p},
		producer.WithNsResolver(primitive.NewPassthroughResolver(t.cfg.NameServers)),
		producer.WithGroupName(t.groupName(cfg.Group)),
		producer.WithInstanceName(instanceName()),
		producer.WithQueueSelector(producer.NewHashQueueSelector()),
		producer.WithSendMsgTimeout(t.cfg.PublishTimeout), producer.WithRetry(2))
	if err != nil {
		return nil, fmt.Errorf("rocketmq: transactional producer: %w", err)
	}
	if err := prod.Start(); err != nil {
		return nil, fmt.Errorf("rocketmq: start the transactional producer: %w", err)
	}
	p.prod = prod
	if err := p.announce(ctx); err != nil {
		prod.Shutdown()
		return nil, err
	}
	return p, nil
}

// announce creates the topics and makes the brokers know the producer
// group. RocketMQ's Go client announces its groups (heartbeats, the
// first 1 s after start, then every 30 s) only to the brokers of topics it
// has sent to, and a broker sends a check-back only to a producer it
// knows; so for each topic announce sends one half message that is no
// envelope and rolls it back (consumers never see it).
func (p *TxProducer) announce(ctx context.Context) error {
	for _, topic := range p.cfg.Topics {
		name := p.t.topicName(topic)
		if err := p.t.ensure(ctx, p.t.cfg.QueueNums, typeTransaction, name); err != nil {
			return err
		}
		m := primitive.NewMessage(name, []byte("msgcontract: announce"))
		m.WithProperty(PropTopic, topic)
		if _, err := p.prod.SendMessageInTransaction(ctx, m); err != nil {
			return fmt.Errorf("rocketmq: announce the transactional producer on %s: %w", name, err)
		}
	}
	return nil
}

// prune deletes rows past txcheck.Retention, at most once an hour: Send
// calls it.
func (p *TxProducer) prune(ctx context.Context) {
	p.pruneMu.Lock()
	defer p.pruneMu.Unlock()
	now := p.t.cfg.Now()
	if now.Sub(p.lastPrune) < time.Hour {
		return
	}
	p.lastPrune = now
	if _, err := txcheck.Prune(ctx, p.cfg.DB, now); err != nil {
		p.cfg.Logger.Warn("rocketmq: prune the check-back table; trying again in an hour", "err", err)
	}
}

// Send stores env as a half message on topic, runs work and records the
// message (txcheck.Record) in one business transaction, and commits the
// message on the broker when that transaction commits.
//
// It returns work's error after rolling both back; an error before work
// runs (the broker refused the half message) and an error after (the
// business transaction did not commit) leave no effect either. The one
// uncertain outcome is a commit that fails without saying whether it
// happened: Send reports it, and the check-back decides from the table.
func (p *TxProducer) Send(ctx context.Context, topic string, env *envelopepb.Envelope, work func(context.Context, *sql.Tx) error) error {
	if p.t.isClosed() {
		return errors.New("rocketmq: TxProducer.Send on a closed transport")
	}
	if !slices.Contains(p.cfg.Topics, topic) {
		return fmt.Errorf("rocketmq: TxProducer.Send to %s, which is not one of TxConfig.Topics %v", topic, p.cfg.Topics)
	}
	if env.GetMessageId() == "" {
		return fmt.Errorf("rocketmq: TxProducer.Send: the envelope for %s has no message id; build it with event.NewEnvelope", topic)
	}
	if env.GetTrace().GetTraceparent() == "" {
		tracing.Inject(ctx, env)
	}
	body, err := envelope.Marshal(env)
	if err != nil {
		return err
	}
	name := p.t.topicName(topic)
	m := message(name, topic, env, body, time.Time{}, time.Time{})
	s := &txSend{ctx: ctx, work: work, stored: p.t.cfg.Now(), id: env.GetMessageId(), topic: topic}
	p.mu.Lock()
	p.pending[m] = s
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.pending, m)
		p.mu.Unlock()
	}()
	p.prune(ctx)
	res, err := p.prod.SendMessageInTransaction(ctx, m)
	if err != nil {
		return fmt.Errorf("rocketmq: store the half message on %s (the business transaction did not run): %w", name, err)
	}
	if res.Status != primitive.SendOK {
		return fmt.Errorf("rocketmq: store the half message on %s: the broker answered %s; rolled back (the business transaction did not run)", name, sendStatus(res.Status))
	}
	return s.err
}

// execute runs s's business transaction; its answer is the verdict the
// client sends the broker.
func (p *TxProducer) execute(s *txSend) primitive.LocalTransactionState {
	deadline := txcheck.Deadline(s.stored, p.cfg.Unresolved)
	ctx, cancel := context.WithDeadline(s.ctx, deadline)
	defer cancel()
	tx, err := p.cfg.DB.BeginTx(ctx, nil)
	if err != nil {
		s.err = fmt.Errorf("rocketmq: begin the business transaction of %s: %w; the half message is rolled back", s.id, err)
		return primitive.RollbackMessageState
	}
	err = s.work(ctx, tx)
	if err == nil {
		err = txcheck.Record(ctx, tx, s.id, s.topic, p.t.cfg.Now())
	}
	if !p.t.cfg.Now().Before(deadline) {
		// Past it, a check-back may already have rolled the message back.
		late := fmt.Errorf("rocketmq: the business transaction of %s ran past half the unresolved window (%v); rolled back, with the half message", s.id, p.cfg.Unresolved)
		err = errors.Join(late, err)
	}
	if err != nil {
		_ = tx.Rollback()
		s.err = err
		if p.crash.Load() {
			return primitive.UnkonwnState
		}
		return primitive.RollbackMessageState
	}
	if err := tx.Commit(); err != nil {
		// Committed or not, the table knows: the check-back decides.
		s.err = fmt.Errorf("rocketmq: commit the business transaction of %s: %w; the broker's check-back delivers the message if the commit happened", s.id, err)
		return primitive.UnkonwnState
	}
	if p.crash.Load() {
		return primitive.UnkonwnState
	}
	return primitive.CommitMessageState
}

// check answers a check-back from the table.
func (p *TxProducer) check(m *primitive.MessageExt) primitive.LocalTransactionState {
	var id string
	if env, err := envelope.Unmarshal(m.Body); err == nil {
		id = env.GetMessageId()
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.t.cfg.PublishTimeout)
	defer cancel()
	a, err := txcheck.Check(ctx, p.cfg.DB, id, time.UnixMilli(m.BornTimestamp), p.t.cfg.Now(), p.cfg.Unresolved)
	if err != nil {
		p.cfg.Logger.Warn("rocketmq: check-back of a transactional message failed; the broker asks again", "message_id", id, "err", err)
	} else {
		p.cfg.Logger.Debug("rocketmq: check-back", "message_id", id, "answer", a.String())
	}
	if ch := p.checked.Load(); ch != nil {
		*ch <- a
	}
	switch a {
	case txcheck.Commit:
		return primitive.CommitMessageState
	case txcheck.Rollback:
		return primitive.RollbackMessageState
	}
	return primitive.UnkonwnState
}

// Close stops the producer; a half message whose verdict was lost is then
// resolved by another producer of the group, or by this one restarted.
func (p *TxProducer) Close() error { return p.prod.Shutdown() }

// txListener is the client's view of a TxProducer.
type txListener struct{ p *TxProducer }

func (l txListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	l.p.mu.Lock()
	s := l.p.pending[m]
	l.p.mu.Unlock()
	if s == nil {
		return primitive.RollbackMessageState
	}
	return l.p.execute(s)
}

func (l txListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	return l.p.check(m)
}
