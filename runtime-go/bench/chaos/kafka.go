package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
)

// The Kafka backend runs against the broker scripts/with-kafka.sh
// started: MSGCONTRACT_KAFKA_BROKERS is its address, MSGCONTRACT_KAFKA_DIR
// its dir and MSGCONTRACT_KAFKA_START the script that starts it again.
const (
	envBrokers = "MSGCONTRACT_KAFKA_BROKERS"
	envDir     = "MSGCONTRACT_KAFKA_DIR"
	envStart   = "MSGCONTRACT_KAFKA_START"
)

// kafkaSession is how long a SIGKILLed consumer keeps its partitions.
const kafkaSession = 3 * time.Second

func kafkaConfig(ns string) kafka.Config {
	return kafka.Config{Brokers: strings.Split(os.Getenv(envBrokers), ","), Namespace: ns, Partitions: 6,
		Lease: lease, SessionTimeout: kafkaSession, ConnectTimeout: time.Minute,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
}

type kafkaQueue struct {
	tr        *kafka.Transport
	ns        string
	restarts  int
	restarted time.Duration
}

func startKafka(ctx context.Context) (*kafkaQueue, error) {
	for _, v := range []string{envBrokers, envDir, envStart} {
		if os.Getenv(v) == "" {
			return nil, fmt.Errorf("-transport kafka needs %s: run it through scripts/with-kafka.sh (make chaos TRANSPORT=kafka)", v)
		}
	}
	ns := fmt.Sprintf("chaos%d.", time.Now().UnixNano())
	tr, err := kafka.New(ctx, kafkaConfig(ns))
	if err != nil {
		return nil, err
	}
	// Creates the topics and the group's retry topic before any publish.
	sub, err := tr.Subscribe(ctx, group, []string{benchmsg.Topic})
	if err != nil {
		return nil, err
	}
	if err := sub.Close(); err != nil {
		return nil, err
	}
	return &kafkaQueue{tr: tr, ns: ns}, nil
}

func (q *kafkaQueue) publish(ctx context.Context, envs []*envelopepb.Envelope) error {
	return q.tr.PublishBatch(ctx, benchmsg.Topic, envs)
}

// pending is the group's uncommitted records on the topic and its retry
// topic; -1 while the broker does not answer (it is being restarted).
func (q *kafkaQueue) pending(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := q.tr.Backlog(ctx, group, benchmsg.Topic)
	if err != nil {
		return -1, nil
	}
	return int(n), nil
}

func (q *kafkaQueue) deadLetters(ctx context.Context) ([]dlq.Record, error) {
	return q.tr.List(ctx, dlq.Filter{Topic: benchmsg.Topic, Limit: 1 << 30})
}

func (q *kafkaQueue) close() { q.tr.Close() }

// maybeRestart SIGKILLs the broker and starts it again on the same data,
// once, when a tenth of the backlog is done: consumers and the producer
// must ride through it.
func (q *kafkaQueue) maybeRestart(n, initial int) error {
	if q.restarts > 0 || n < 0 || initial <= 0 || n > initial*9/10 {
		return nil
	}
	took, err := restartBroker(os.Getenv(envDir), os.Getenv(envStart), os.Getenv(envBrokers), "pid")
	if err != nil {
		return err
	}
	q.restarts++
	q.restarted = took
	fmt.Printf("chaos: broker SIGKILLed with %d of %d deliveries pending and restarted in %v\n", n, initial,
		q.restarted.Round(time.Millisecond))
	return nil
}
