package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
)

// The RabbitMQ backend runs against the node scripts/with-rabbitmq.sh
// started: MSGCONTRACT_TEST_RABBITMQ is its AMQP URL,
// MSGCONTRACT_RABBITMQ_DIR its dir and MSGCONTRACT_RABBITMQ_START the
// script that starts it again on the same data and ports.
const (
	envRabbitURL   = "MSGCONTRACT_TEST_RABBITMQ"
	envRabbitDir   = "MSGCONTRACT_RABBITMQ_DIR"
	envRabbitStart = "MSGCONTRACT_RABBITMQ_START"
)

// rabbitQuiet is how long the group's queues must stay empty before the
// run counts as drained. AMQP reports only a queue's ready messages, not
// what another connection holds unacknowledged, so an empty queue may
// still have deliveries in a consumer's hands: those are settled (acked,
// retried through a delay queue, which counts again, or dead-lettered)
// within the handler timeout, or handed back when the lease runs out or
// the holder dies. Longer than lease plus a handler timeout covers all.
const rabbitQuiet = lease + 5*time.Second

func rabbitConfig(prefix string) rabbitmq.Config {
	return rabbitmq.Config{URL: os.Getenv(envRabbitURL), Prefix: prefix, Lease: lease, ConnectTimeout: time.Minute,
		Topology: map[string][]string{benchmsg.Topic: {group}}}
}

type rabbitQueue struct {
	tr         *rabbitmq.Transport
	prefix     string
	restarts   int
	emptySince time.Time
}

func startRabbitMQ(ctx context.Context) (*rabbitQueue, error) {
	for _, v := range []string{envRabbitURL, envRabbitDir, envRabbitStart} {
		if os.Getenv(v) == "" {
			return nil, fmt.Errorf("-transport rabbitmq needs %s: run it through scripts/with-rabbitmq.sh (make chaos TRANSPORT=rabbitmq)", v)
		}
	}
	prefix := fmt.Sprintf("chaos%d", time.Now().UnixNano())
	// New declares the group's queue (Topology) before anything is
	// published: RabbitMQ keeps messages only for queues that exist.
	tr, err := rabbitmq.New(ctx, rabbitConfig(prefix))
	if err != nil {
		return nil, err
	}
	return &rabbitQueue{tr: tr, prefix: prefix}, nil
}

func (q *rabbitQueue) publish(ctx context.Context, envs []*envelopepb.Envelope) error {
	for _, env := range envs {
		if err := q.tr.Publish(ctx, benchmsg.Topic, env); err != nil {
			return err
		}
	}
	return nil
}

// pending is the group's ready messages, its group queue's and its delay
// queues'; -1 while the node does not answer (it is being restarted).
// Once they are all gone it stays 1 until they have been gone for
// rabbitQuiet (see there).
func (q *rabbitQueue) pending(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := q.tr.Backlog(ctx, group)
	if err != nil {
		q.emptySince = time.Time{}
		return -1, nil
	}
	if n > 0 {
		q.emptySince = time.Time{}
		return n, nil
	}
	if q.emptySince.IsZero() {
		q.emptySince = time.Now()
	}
	if time.Since(q.emptySince) < rabbitQuiet {
		return 1, nil
	}
	return 0, nil
}

func (q *rabbitQueue) deadLetters(ctx context.Context) ([]dlq.Record, error) {
	return q.tr.List(ctx, dlq.Filter{Topic: benchmsg.Topic, Limit: 1 << 30})
}

func (q *rabbitQueue) close() { q.tr.Close() }

// maybeRestart SIGKILLs the node's Erlang VM and starts the node again on
// the same data, once, when a tenth of the backlog is done: consumers,
// their retries and dead letters must ride through it.
func (q *rabbitQueue) maybeRestart(n, initial int) error {
	if q.restarts > 0 || n < 0 || initial <= 0 || n > initial*9/10 {
		return nil
	}
	// The VM, then its wrapper script.
	took, err := restartBroker(os.Getenv(envRabbitDir), os.Getenv(envRabbitStart), os.Getenv(envRabbitURL), "node.pid", "pid")
	if err != nil {
		return err
	}
	q.restarts++
	fmt.Printf("chaos: RabbitMQ node SIGKILLed with %d of %d deliveries pending and restarted in %v\n", n, initial,
		took.Round(time.Millisecond))
	return nil
}
