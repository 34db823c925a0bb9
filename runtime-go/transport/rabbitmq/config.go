package rabbitmq

import (
	"errors"
	"fmt"
	"math/bits"
	"net/url"
	"strings"
	"time"
)

// Config configures a Transport. URL is required.
type Config struct {
	// URL is the broker's AMQP 0-9-1 address,
	// amqp://user:password@host:5672/vhost (amqps:// for TLS).
	URL string
	// Prefix names every exchange and queue of the transport (see the
	// package doc). Defaults to "msgcontract".
	Prefix string
	// Topology maps a topic to the groups that consume it. New declares
	// their queues, so a message published before a group's first
	// Subscribe is kept for it: RabbitMQ hands a group only the messages
	// published after its queue exists. Subscribe declares the same
	// queues, so deployments that start consumers first may leave it
	// empty.
	Topology map[string][]string
	// Lease is how long a fetched delivery stays with this subscription
	// before it is handed back to the broker (basic.nack, requeue) and
	// delivered again with Attempt+1. The consumer extends it while its
	// handler runs. Defaults to 60 s; keep it above the consumer's
	// HandlerTimeout.
	Lease time.Duration
	// Prefetch is basic.qos for each of a subscription's queues: how many
	// unacknowledged deliveries the broker sends ahead. 0, the default,
	// takes the first Fetch's max: the consumer's batch size.
	Prefetch int
	// MinDelay is the shortest delay queue; a message due sooner is held
	// in the subscription until due, keeping its prefetch slot. A power of
	// two milliseconds between 1 ms and 1 s. Defaults to 16 ms.
	MinDelay time.Duration
	// ConnectTimeout bounds how long New and Subscribe wait for the
	// broker: the dial and the topology declarations, tried again while
	// the broker refuses or drops the connection (a restart), never when
	// it refuses the request itself (credentials, a queue declared with
	// other arguments). Defaults to 30 s.
	ConnectTimeout time.Duration
	// PublishTimeout bounds the wait for one publish's confirm when the
	// caller's context has no earlier deadline. Defaults to 30 s.
	PublishTimeout time.Duration
	// Now is the clock that turns not_before into a delay. Defaults to
	// time.Now.
	Now func() time.Time
}

// Defaults.
const (
	DefaultPrefix   = "msgcontract"
	DefaultLease    = 60 * time.Second
	DefaultMinDelay = 16 * time.Millisecond
	// maxBucketExp is the longest delay queue, 2^31 ms (24.9 days); a
	// longer wait takes several hops through it.
	maxBucketExp = 31
)

func (c *Config) setDefaults() {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.Lease == 0 {
		c.Lease = DefaultLease
	}
	if c.MinDelay == 0 {
		c.MinDelay = DefaultMinDelay
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 30 * time.Second
	}
	if c.PublishTimeout == 0 {
		c.PublishTimeout = 30 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate reports every missing or invalid field at once.
func (c *Config) Validate() error {
	var errs []error
	if c.URL == "" {
		errs = append(errs, errors.New("rabbitmq: Config.URL is required (amqp://user:password@host:5672/)"))
	} else if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "amqp" && u.Scheme != "amqps") {
		errs = append(errs, fmt.Errorf("rabbitmq: Config.URL %q is not an amqp:// or amqps:// URL", redact(c.URL)))
	}
	if c.Prefix != "" {
		if err := checkName("Prefix", c.Prefix, "/*#"); err != nil {
			errs = append(errs, err)
		}
	}
	for topic, groups := range c.Topology {
		if err := checkTopic(topic); err != nil {
			errs = append(errs, err)
		}
		for _, g := range groups {
			if err := checkGroup(g); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if c.Lease < 0 {
		errs = append(errs, fmt.Errorf("rabbitmq: Config.Lease %v is negative", c.Lease))
	}
	if c.Prefetch < 0 || c.Prefetch > 65535 {
		errs = append(errs, fmt.Errorf("rabbitmq: Config.Prefetch %d is outside 0..65535 (basic.qos)", c.Prefetch))
	}
	if c.MinDelay != 0 {
		ms := c.MinDelay.Milliseconds()
		if c.MinDelay%time.Millisecond != 0 || ms < 1 || ms > 1024 || ms&(ms-1) != 0 {
			errs = append(errs, fmt.Errorf("rabbitmq: Config.MinDelay %v must be a power of two milliseconds from 1ms to 1.024s", c.MinDelay))
		}
	}
	return errors.Join(errs...)
}

func checkName(what, s, forbidden string) error {
	switch {
	case s == "":
		return fmt.Errorf("rabbitmq: %s is empty", what)
	case len(s) > 200:
		return fmt.Errorf("rabbitmq: %s %.20q… is longer than 200 bytes (queue names are at most 255)", what, s)
	case strings.ContainsAny(s, forbidden):
		return fmt.Errorf("rabbitmq: %s %q contains one of %q", what, s, forbidden)
	}
	return nil
}

// checkTopic: a topic is a routing key on the topic exchange; '*' and '#'
// would make its binding a pattern.
func checkTopic(topic string) error { return checkName("topic", topic, "*#") }

// checkGroup: a group is one '/'-separated part of a queue name.
func checkGroup(group string) error { return checkName("group", group, "/") }

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// names derives every exchange and queue name from the prefix P:
//
//	P                  topic exchange: routing key = topic
//	P.retry            direct exchange: routing key = a group queue's name
//	P.delay            direct exchange: routing key = a delay queue's name
//	P.unrouted         fanout exchange, alternate exchange of P, and its queue
//	P/<group>/<topic>  a group's queue of a topic (quorum)
//	P.delay/<group>/<ms>  a group's delay queue (quorum, x-message-ttl = ms)
//	P.dlq              dead-letter records (quorum)
type names struct{ p string }

func (n names) topicExchange() string            { return n.p }
func (n names) retryExchange() string            { return n.p + ".retry" }
func (n names) delayExchange() string            { return n.p + ".delay" }
func (n names) unrouted() string                 { return n.p + ".unrouted" }
func (n names) dlq() string                      { return n.p + ".dlq" }
func (n names) queue(group, topic string) string { return n.p + "/" + group + "/" + topic }
func (n names) delayQueue(group string, exp int) string {
	return fmt.Sprintf("%s.delay/%s/%d", n.p, group, int64(1)<<exp)
}

// bucket picks the delay queue for a wait of d: the longest one not longer
// than d, as the exponent of its TTL in milliseconds. ok is false when d is
// shorter than minExp's queue: the message is held in process instead.
func bucket(d time.Duration, minExp int) (exp int, ok bool) {
	ms := d.Milliseconds()
	if ms < int64(1)<<minExp {
		return 0, false
	}
	exp = 63 - bits.LeadingZeros64(uint64(ms))
	return min(exp, maxBucketExp), true
}

// minExp is MinDelay's exponent.
func (c *Config) minExp() int { return bits.TrailingZeros64(uint64(c.MinDelay.Milliseconds())) }
