// Package dlqopen opens a transport's dead-letter destination by address,
// for tooling such as `msgcontract dlq list | show | replay | purge`.
package dlqopen

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// Store is a dead-letter store with the connection behind it.
type Store interface {
	dlq.Store
	// Close releases the connection.
	Close() error
}

// Open opens the dead-letter store at target:
//
//	path/to/queue.db, sqlite:path/to/queue.db   the embedded SQLite queue file
//	nats://host:4222[?stream=NAME&prefix=P]     NATS JetStream (stream defaults
//	                                            to MSGCONTRACT, prefix to msgcontract)
//	kafka://host:9092[,host:9092][?namespace=N] Apache Kafka (dead letters of topic
//	                                            T in T.dlq); TLS/SASL need kafka.New
//	amqp://user:pass@host:5672/vhost[?prefix=P] RabbitMQ (records in the quorum queue
//	amqps://...                                 P.dlq; prefix defaults to msgcontract)
//	rocketmq://host:9876[,host:9876][?namespace=N]
//	                                            Apache RocketMQ by its name servers
//	                                            (records in the topic Nmsgcontract_dlq)
func Open(ctx context.Context, target string) (Store, error) {
	switch {
	case strings.HasPrefix(target, "amqp://") || strings.HasPrefix(target, "amqps://"):
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("dlqopen: %q: %w", target, err)
		}
		prefix := u.Query().Get("prefix")
		u.RawQuery = ""
		// A command line waits 5 s for a broker that is down, not the
		// 30 s a service starting beside a restarting broker waits.
		return rabbitmq.New(ctx, rabbitmq.Config{URL: u.String(), Prefix: prefix, ConnectTimeout: 5 * time.Second})
	case strings.HasPrefix(target, "kafka://"):
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("dlqopen: %q: %w", target, err)
		}
		return kafka.New(ctx, kafka.Config{Brokers: strings.Split(u.Host, ","), Namespace: u.Query().Get("namespace")})
	case strings.HasPrefix(target, "rocketmq://"):
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("dlqopen: %q: %w", target, err)
		}
		off := false // a command line never creates topics
		return rocketmq.New(ctx, rocketmq.Config{NameServers: strings.Split(u.Host, ","), Namespace: u.Query().Get("namespace"),
			CreateTopics: &off, ConnectTimeout: 5 * time.Second})
	case strings.HasPrefix(target, "nats://") || strings.HasPrefix(target, "tls://"):
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("dlqopen: %q: %w", target, err)
		}
		q := u.Query()
		u.RawQuery = ""
		nc, err := nats.Connect(u.String())
		if err != nil {
			return nil, fmt.Errorf("dlqopen: connect %s: %w", u.Redacted(), err)
		}
		tr, err := natsjs.New(ctx, natsjs.Config{Conn: nc, Stream: q.Get("stream"), SubjectPrefix: q.Get("prefix")})
		if err != nil {
			nc.Close()
			return nil, err
		}
		return natsStore{tr, nc}, nil
	case strings.Contains(target, "://"):
		return nil, fmt.Errorf("dlqopen: unsupported address %q: use a SQLite queue file path, nats://host:port, kafka://host:port, amqp://user:password@host:port/ or rocketmq://host:port", target)
	default:
		path := strings.TrimPrefix(target, "sqlite:")
		// Opening creates a queue that does not exist: a mistyped path
		// would show an empty dead-letter list instead of an error.
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file; name the queue file the services use", path)
		} else if err != nil {
			return nil, fmt.Errorf("dlqopen: %w", err)
		}
		tr, err := sqlitequeue.Open(ctx, path, sqlitequeue.Config{})
		if err != nil {
			return nil, err
		}
		return tr, nil
	}
}

type natsStore struct {
	*natsjs.Transport
	nc *nats.Conn
}

func (s natsStore) Close() error {
	s.nc.Close()
	return nil
}
