package kafka

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Config configures a Transport. Brokers is required; every other field
// has the default its comment states.
type Config struct {
	// Brokers are the seed brokers, host:port.
	Brokers []string
	// Opts are passed to every franz-go client the transport creates,
	// after the transport's own: TLS (kgo.DialTLSConfig), SASL
	// (kgo.SASL with a mechanism from franz-go's pkg/sasl), client id,
	// logger. Options that would change the delivery guarantees (acks,
	// idempotence, consumer group, commits) are the transport's and must
	// not be set here.
	Opts []kgo.Opt
	// Namespace is prepended to every topic and group name, so several
	// systems (or tests) can share a cluster. Defaults to "".
	Namespace string
	// CreateTopics creates missing topics (Partitions, ReplicationFactor)
	// before the first publish or subscribe. Defaults to true; false
	// makes a missing topic an error that names it.
	CreateTopics *bool
	// Partitions of the topics the transport creates. Defaults to 6.
	Partitions int32
	// ReplicationFactor of the topics the transport creates. Defaults to
	// -1: the broker's default.replication.factor.
	ReplicationFactor int16
	// DLQRetention is retention.ms of created dead-letter topics: purged
	// records are hidden at once and leave the log when it expires.
	// Defaults to 30 days; negative keeps them forever.
	DLQRetention time.Duration
	// ConnectTimeout bounds New's first contact with the cluster and
	// every topic check: past it the error says which brokers did not
	// answer. Defaults to 10 s.
	ConnectTimeout time.Duration
	// PublishTimeout bounds one record's delivery (kgo's
	// RecordDeliveryTimeout). Defaults to 30 s.
	PublishTimeout time.Duration
	// Lease is how long a fetched delivery may stay unsettled in this
	// process before it is handed to another worker (Attempt+1); the
	// consumer extends it while a handler runs. Across processes the
	// lease is the group's SessionTimeout. Defaults to 60 s.
	Lease time.Duration
	// SessionTimeout is the consumer group session: a member that stops
	// heartbeating for this long loses its partitions, and another member
	// resumes from the last committed offset. Defaults to 10 s (the
	// broker's group.min.session.timeout.ms must allow it).
	SessionTimeout time.Duration
	// CommitInterval is how often settled offsets are committed. Defaults
	// to 200 ms. Offsets are also committed on revoke and Close.
	CommitInterval time.Duration
	// RevokeWait bounds how long a revoked partition waits for its
	// in-flight deliveries to settle before its offsets are committed and
	// it is released. Defaults to 10 s.
	RevokeWait time.Duration
	// MaxBuffered caps the records a subscription holds from the time it
	// polls them until their offsets are committed; polling stops while
	// it is reached. Defaults to 20,000.
	MaxBuffered int
	// Registerer, when set, gets msgcontract_consumer_lag_messages
	// {group,topic,partition}: records behind the high watermark after
	// each fetch.
	Registerer prometheus.Registerer
	// Confluent, when set, writes event records in the Confluent Schema
	// Registry wire format: value = the payload framed with its schema
	// id, header msgcontract.envelope = the rest of the envelope (doc.go).
	// Consumers read both forms whether it is set or not, but need it to
	// check a framed record's schema id.
	Confluent *ConfluentConfig
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock that turns Defer's time into a delay. Defaults to
	// time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	if c.CreateTopics == nil {
		t := true
		c.CreateTopics = &t
	}
	if c.Partitions == 0 {
		c.Partitions = 6
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = -1
	}
	if c.DLQRetention == 0 {
		c.DLQRetention = 30 * 24 * time.Hour
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	if c.PublishTimeout == 0 {
		c.PublishTimeout = 30 * time.Second
	}
	if c.Lease == 0 {
		c.Lease = 60 * time.Second
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = 10 * time.Second
	}
	if c.CommitInterval == 0 {
		c.CommitInterval = 200 * time.Millisecond
	}
	if c.RevokeWait == 0 {
		c.RevokeWait = 10 * time.Second
	}
	if c.MaxBuffered == 0 {
		c.MaxBuffered = 20_000
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate reports every missing or invalid field at once.
func (c *Config) Validate() error {
	var errs []error
	if len(c.Brokers) == 0 {
		errs = append(errs, errors.New("kafka: Config.Brokers is required (host:port of at least one broker)"))
	}
	if c.Partitions < 1 {
		errs = append(errs, fmt.Errorf("kafka: Partitions %d must be at least 1", c.Partitions))
	}
	if c.Namespace != "" && !legalName(c.Namespace) {
		errs = append(errs, fmt.Errorf("kafka: Namespace %q may only hold ASCII letters, digits, '.', '_' and '-'", c.Namespace))
	}
	if c.Confluent != nil && c.Confluent.RegistryURL == "" {
		errs = append(errs, errors.New("kafka: Confluent.RegistryURL is required when Confluent is set"))
	}
	if c.MaxBuffered < 1 {
		errs = append(errs, fmt.Errorf("kafka: MaxBuffered %d must be at least 1", c.MaxBuffered))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"ConnectTimeout", c.ConnectTimeout}, {"PublishTimeout", c.PublishTimeout}, {"Lease", c.Lease},
		{"SessionTimeout", c.SessionTimeout}, {"CommitInterval", c.CommitInterval}, {"RevokeWait", c.RevokeWait}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("kafka: %s %v is negative", d.name, d.v))
		}
	}
	return errors.Join(errs...)
}

// legalName reports whether s only holds characters Kafka allows in a
// topic name.
func legalName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// sanitize maps s to a legal topic name fragment.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if legalName(string(r)) {
			return r
		}
		return '_'
	}, s)
}

// Topic names, all under Config.Namespace.
const (
	retryInfix = ".retry."
	dlqSuffix  = ".dlq"
	opsSuffix  = ".dlq.ops"
)

func (t *Transport) topicName(topic string) string { return t.cfg.Namespace + topic }

func (t *Transport) retryTopic(group, topic string) string {
	return t.cfg.Namespace + topic + retryInfix + sanitize(group)
}

func (t *Transport) dlqTopic(topic string) string { return t.cfg.Namespace + topic + dlqSuffix }

func (t *Transport) opsTopic(topic string) string { return t.cfg.Namespace + topic + opsSuffix }

func (t *Transport) groupName(group string) string { return t.cfg.Namespace + group }
