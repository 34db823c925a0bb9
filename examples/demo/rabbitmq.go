package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
)

// rabbitmqEnv is the variable scripts/with-rabbitmq.sh sets to its node's
// AMQP URL; -rabbitmq defaults to it.
const rabbitmqEnv = "MSGCONTRACT_TEST_RABBITMQ"

// rabbitmqTransport is runtime-go's rabbitmq transport on a real broker,
// every exchange and queue of this run under a prefix of its own, so a
// rerun against the same node never sees an earlier run's messages. The
// Python service declares and consumes the same queues (docs/rabbitmq.md).
type rabbitmqTransport struct {
	*rabbitmq.Transport
	url, prefix string
}

func openRabbitMQ(ctx context.Context, amqpURL string) (*rabbitmqTransport, error) {
	if amqpURL == "" {
		amqpURL = os.Getenv(rabbitmqEnv)
	}
	if amqpURL == "" {
		return nil, fmt.Errorf("-transport rabbitmq needs -rabbitmq amqp://user:password@host:5672/ (or %s); `make demo TRANSPORT=rabbitmq` starts a node", rabbitmqEnv)
	}
	now := time.Now().UTC()
	t := &rabbitmqTransport{url: amqpURL, prefix: fmt.Sprintf("demo-%s-%09d", now.Format("20060102-150405"), now.Nanosecond())}
	// Topology declares both groups' queues before the relay publishes:
	// RabbitMQ hands a group only what is published after its queue
	// exists.
	var err error
	t.Transport, err = rabbitmq.New(ctx, rabbitmq.Config{URL: amqpURL, Prefix: t.prefix,
		Topology: map[string][]string{topic: groups}})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// redactedURL is the URL with its password replaced by "xxxxx".
func (t *rabbitmqTransport) redactedURL() string {
	u, err := url.Parse(t.url)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func (t *rabbitmqTransport) describe() string {
	return fmt.Sprintf("RabbitMQ at %s (exchanges and quorum queues under %q)", t.redactedURL(), t.prefix)
}

func (t *rabbitmqTransport) pythonArgs() []string {
	return []string{"--rabbitmq", t.url, "--rabbitmq-prefix", t.prefix}
}

// queued sums the groups' backlogs: messages ready in their queues and
// delay queues (retry copies not due yet) plus the deliveries this
// process holds unacknowledged. AMQP does not report what the Python
// service's connection holds unacknowledged; drain's quiet polls cover
// that gap.
func (t *rabbitmqTransport) queued(ctx context.Context, groups []string) (int, error) {
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

// deadLetters reads the group's records of the dead-letter queue
// (P.dlq, both languages write there) through dlq.Store, as `msgcontract
// dlq list --rabbitmq` does.
func (t *rabbitmqTransport) deadLetters(ctx context.Context, group string) ([]dlq.Record, error) {
	return t.List(ctx, dlq.Filter{Group: group, Limit: 1 << 20})
}

// dlqAddr is the run's dead-letter store as dlqopen addresses it
// (amqp://user:password@host:port/?prefix=P; `msgcontract dlq --rabbitmq
// URL --prefix P` on the command line).
func (t *rabbitmqTransport) dlqAddr() string {
	u, err := url.Parse(t.url)
	if err != nil {
		return t.url
	}
	q := u.Query()
	q.Set("prefix", t.prefix)
	u.RawQuery = q.Encode()
	return u.String()
}
