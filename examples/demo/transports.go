package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs/natsserver"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// transports the demo runs on (-transport).
var transports = []string{"sqlite", "nats", "kafka", "rabbitmq", "rocketmq"}

// demoTransport is everything transport-specific in the scenario: the Go
// pieces publish and subscribe through it, the Python service is told how
// to reach it, the drain wait asks it what is still queued and the summary
// reads its dead letters.
type demoTransport interface {
	transport.Publisher
	transport.Subscriber
	// PublishRaw publishes bytes that are not an envelope (the poison
	// message).
	PublishRaw(ctx context.Context, topic string, body []byte) error
	// describe names the transport in the demo's steps.
	describe() string
	// pythonArgs are the Python reconciliation service's flags that point
	// it at the transport.
	pythonArgs() []string
	// queued counts the messages of groups not yet settled: waiting, in
	// flight or delayed, retries included.
	queued(ctx context.Context, groups []string) (int, error)
	// deadLetters returns group's dead-letter records.
	deadLetters(ctx context.Context, group string) ([]dlq.Record, error)
	Close() error
}

// openTransport starts cfg's transport with its state under work;
// registry is the schema registry's URL (the Kafka transport frames
// records with its schema ids).
func openTransport(ctx context.Context, cfg Config, work, registry string) (demoTransport, error) {
	switch cfg.Transport {
	case "sqlite":
		return openSQLite(ctx, filepath.Join(work, "queue.db"))
	case "nats":
		return openNATS(ctx, filepath.Join(work, "nats"))
	case "kafka":
		return openKafka(ctx, cfg.Brokers, registry)
	case "rabbitmq":
		return openRabbitMQ(ctx, cfg.RabbitMQ)
	case "rocketmq":
		return openRocketMQ(ctx, cfg.RocketMQ)
	}
	return nil, fmt.Errorf("transport %q: want one of %v", cfg.Transport, transports)
}

// sqliteTransport is the embedded default: one SQLite file that the Go
// transport and the Python service's Queue class both open.
type sqliteTransport struct {
	*sqlitequeue.Transport
	path string
}

func openSQLite(ctx context.Context, path string) (*sqliteTransport, error) {
	tr, err := sqlitequeue.Open(ctx, path, sqlitequeue.Config{})
	if err != nil {
		return nil, err
	}
	return &sqliteTransport{Transport: tr, path: path}, nil
}

func (t *sqliteTransport) describe() string     { return "the embedded SQLite transport" }
func (t *sqliteTransport) pythonArgs() []string { return []string{"--queue", t.path} }

// queued counts every message not yet settled, of any group.
func (t *sqliteTransport) queued(ctx context.Context, _ []string) (int, error) {
	return t.Backlog(ctx, "")
}

// deadLetters lists group's records through the transport's dlq.Store,
// as the NATS side does.
func (t *sqliteTransport) deadLetters(ctx context.Context, group string) ([]dlq.Record, error) {
	return t.List(ctx, dlq.Filter{Group: group, Limit: 1 << 30})
}

// natsTransport is a NATS server with JetStream running in this process,
// on a random loopback port, storing its streams under the work
// directory, and runtime-go's natsjs transport on a connection to it. The
// Python service connects to the same server with nats-py.
type natsTransport struct {
	*natsjs.Transport
	srv *natsserver.Server
	nc  *nats.Conn
}

func openNATS(ctx context.Context, storeDir string) (*natsTransport, error) {
	srv, err := natsserver.Start(storeDir)
	if err != nil {
		return nil, err
	}
	t := &natsTransport{srv: srv}
	if t.nc, err = srv.Connect(); err != nil {
		t.Close()
		return nil, err
	}
	// A short FetchWait lets the payment service notice the end of the
	// run quickly; the consumer asks again whenever a fetch comes back
	// empty.
	if t.Transport, err = natsjs.New(ctx, natsjs.Config{Conn: t.nc, FetchWait: 250 * time.Millisecond}); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

func (t *natsTransport) describe() string {
	return "an in-process NATS JetStream server (" + t.srv.URL() + ")"
}

func (t *natsTransport) pythonArgs() []string { return []string{"--nats", t.srv.URL()} }

// queued sums the groups' backlogs: messages of their durable consumers
// not yet delivered, plus those delivered and not yet acknowledged
// (in flight, or handed back with a delay because not yet due).
func (t *natsTransport) queued(ctx context.Context, groups []string) (int, error) {
	total := 0
	for _, g := range groups {
		n, err := t.Backlog(ctx, g)
		if err != nil {
			return 0, fmt.Errorf("backlog of %s: %w", g, err)
		}
		total += n
	}
	return total, nil
}

// deadLetters lists the group's records of the dead-letter stream through
// the dlq.Store API, as `msgcontract dlq list` does.
func (t *natsTransport) deadLetters(ctx context.Context, group string) ([]dlq.Record, error) {
	return t.List(ctx, dlq.Filter{Group: group, Limit: 1 << 20})
}

// Close disconnects and stops the server.
func (t *natsTransport) Close() error {
	if t.nc != nil {
		t.nc.Close()
	}
	t.srv.Close()
	return nil
}
