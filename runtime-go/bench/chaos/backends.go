package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs/natsserver"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

const group = "chaos"

// lease is the consumers' visibility timeout: a killed process's messages
// come back after it.
const lease = 3 * time.Second

// openBusiness opens the business database: the SQLite file in dir,
// PostgreSQL at pgDSN or MySQL at mysqlDSN.
func openBusiness(cfg config) (*sql.DB, sqldb.Dialect, error) {
	if cfg.mysqlDSN != "" {
		db, err := mysqldb.Open(cfg.mysqlDSN)
		return db, sqldb.MySQL, err
	}
	if cfg.pgDSN != "" {
		db, err := pgdb.Open(cfg.pgDSN)
		return db, sqldb.Postgres, err
	}
	db, err := sqlitedb.Open(filepath.Join(cfg.dir, "business.db"))
	return db, sqldb.SQLite, err
}

// queue is the transport as the parent sees it.
type queue interface {
	publish(ctx context.Context, envs []*envelopepb.Envelope) error
	pending(ctx context.Context) (int, error)
	deadLetters(ctx context.Context) ([]dlq.Record, error)
	close()
}

// openTransport opens the transport for a child process whose business
// database is db.
func openTransport(ctx context.Context, cfg config, db *sql.DB) (transport.Subscriber, func(), error) {
	if cfg.kafkaNS != "" {
		tr, err := kafka.New(ctx, kafkaConfig(cfg.kafkaNS))
		if err != nil {
			return nil, nil, err
		}
		return tr, func() { tr.Close() }, nil
	}
	if cfg.rocketNS != "" {
		tr, err := rocketmq.New(ctx, rocketConfig(cfg.rocketNS))
		if err != nil {
			return nil, nil, err
		}
		return tr, func() { tr.Close() }, nil
	}
	if cfg.rabbitPrefix != "" {
		tr, err := rabbitmq.New(ctx, rabbitConfig(cfg.rabbitPrefix))
		if err != nil {
			return nil, nil, err
		}
		return tr, func() { tr.Close() }, nil
	}
	if cfg.natsURL != "" {
		nc, err := nats.Connect(cfg.natsURL)
		if err != nil {
			return nil, nil, err
		}
		tr, err := natsjs.New(ctx, natsjs.Config{Conn: nc, AckWait: lease, FetchWait: 200 * time.Millisecond})
		if err != nil {
			nc.Close()
			return nil, nil, err
		}
		return tr, nc.Close, nil
	}
	qcfg := sqlitequeue.Config{Lease: lease, PollInterval: 20 * time.Millisecond}
	if cfg.transport == "sqlite-shared" { // the consumer reads fetches in its business transaction
		qcfg.DB = db
		tr, err := sqlitequeue.New(ctx, qcfg)
		if err != nil {
			return nil, nil, err
		}
		return tr, func() { tr.Close() }, nil
	}
	tr, err := sqlitequeue.Open(ctx, queueFile(cfg), qcfg)
	if err != nil {
		return nil, nil, err
	}
	return tr, func() { tr.Close() }, nil
}

// queueFile is the embedded queue's file: the business file with
// -transport sqlite-shared.
func queueFile(cfg config) string {
	if cfg.transport == "sqlite-shared" {
		return filepath.Join(cfg.dir, "business.db")
	}
	return filepath.Join(cfg.dir, "queue.db")
}

type sqliteQueue struct{ tr *sqlitequeue.Transport }

func (q sqliteQueue) publish(ctx context.Context, envs []*envelopepb.Envelope) error {
	return q.tr.PublishBatch(ctx, benchmsg.Topic, envs)
}
func (q sqliteQueue) pending(ctx context.Context) (int, error) { return q.tr.Backlog(ctx, "") }
func (q sqliteQueue) deadLetters(ctx context.Context) ([]dlq.Record, error) {
	return q.tr.List(ctx, dlq.Filter{Limit: 1 << 30})
}
func (q sqliteQueue) close() { q.tr.Close() }

type natsQueue struct {
	ns *natsserver.Server
	nc *nats.Conn
	tr *natsjs.Transport
}

// startNATS runs a JetStream server in the parent process, storing in dir;
// the children connect to its URL.
func startNATS(ctx context.Context, dir string) (*natsQueue, string, error) {
	ns, err := natsserver.Start(filepath.Join(dir, "nats"))
	if err != nil {
		return nil, "", err
	}
	nc, err := ns.Connect()
	if err != nil {
		ns.Close()
		return nil, "", err
	}
	tr, err := natsjs.New(ctx, natsjs.Config{Conn: nc, AckWait: lease})
	if err != nil {
		return nil, "", err
	}
	// Create the group's durable consumer now, so the backlog is counted
	// from the first message.
	if _, err := tr.Subscribe(ctx, group, []string{benchmsg.Topic}); err != nil {
		return nil, "", err
	}
	return &natsQueue{ns: ns, nc: nc, tr: tr}, ns.URL(), nil
}

func (q *natsQueue) publish(ctx context.Context, envs []*envelopepb.Envelope) error {
	for _, env := range envs {
		if err := q.tr.Publish(ctx, benchmsg.Topic, env); err != nil {
			return err
		}
	}
	return nil
}
func (q *natsQueue) pending(ctx context.Context) (int, error) { return q.tr.Backlog(ctx, group) }
func (q *natsQueue) deadLetters(ctx context.Context) ([]dlq.Record, error) {
	return q.tr.List(ctx, dlq.Filter{Limit: 1 << 30})
}
func (q *natsQueue) close() {
	q.nc.Close()
	q.ns.Close()
}
