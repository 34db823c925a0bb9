package rocketmq

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Config configures a Transport. NameServers is required; every other
// field has the default its comment states.
type Config struct {
	// NameServers are the name servers, host:port.
	NameServers []string
	// Brokers are the master brokers' addresses (host:port) on which the
	// transport creates the topics it needs (CreateTopics). With none,
	// every topic must exist.
	Brokers []string
	// Namespace is prepended to every topic and group name, so several
	// systems (or tests) can share a cluster. Defaults to "".
	Namespace string
	// CreateTopics creates missing topics on Brokers, with QueueNums
	// queues, before the first publish or subscribe. Defaults to true
	// when Brokers are given; false makes a missing topic an error that
	// names it.
	CreateTopics *bool
	// TransactionTopics are the msgcontract topics that take transactional
	// (half) messages: the transport creates their RocketMQ topics with
	// message type TRANSACTION, which the proxy requires of a 5.x Java or
	// Python TxProducer's sends (and which refuses a 5.x client's ordinary
	// send). A Go TxProducer creates the topics it sends to so anyway.
	TransactionTopics []string
	// FIFOTopics are the msgcontract topics whose messages carry a message
	// group (the biz_key): EnsureTopics and the publishing paths create
	// their RocketMQ topics with message type FIFO, which the proxy
	// requires of a 5.x Java or Python publisher's FIFO messages.
	FIFOTopics []string
	// FIFOGroups are the consumer groups of 5.x Java or Python members
	// that keep a biz_key's messages in order: EnsureTopics creates them
	// orderly (RocketMQ's FIFO consumer groups, whose members the broker
	// hands a queue's messages one after another) with the broker's
	// other defaults, and creates the non-orderly group the members read
	// the group's retry topic as (the retry topic's name). A Go
	// subscription keeps a key's order in any group.
	FIFOGroups []string
	// QueueNums is how many read and write queues created topics get.
	// Defaults to 4.
	QueueNums int
	// ConnectTimeout bounds New's first contact with the name servers and
	// every topic check. Defaults to 10 s.
	ConnectTimeout time.Duration
	// PublishTimeout bounds one send. Defaults to 10 s.
	PublishTimeout time.Duration
	// Lease is how long a fetched delivery may stay unsettled before it is
	// handed back to the broker (Attempt+1); the consumer extends it
	// while a handler runs. Defaults to 60 s.
	Lease time.Duration
	// TimerLead is how long before its not_before a retry or deferred copy
	// is due on the broker's timer; the subscription holds it from then
	// until not_before. Defaults to 1 s: a warm broker's timer fires up to
	// about 150 ms late, a broker just started up to about a second.
	TimerLead time.Duration
	// MaxInFlight caps the messages one subscription holds: handed out,
	// held until not_before, or waiting for Fetch. Defaults to 256.
	MaxInFlight int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock. Defaults to time.Now.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	if c.CreateTopics == nil {
		on := len(c.Brokers) > 0
		c.CreateTopics = &on
	}
	if c.QueueNums == 0 {
		c.QueueNums = 4
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	if c.PublishTimeout == 0 {
		c.PublishTimeout = 10 * time.Second
	}
	if c.Lease == 0 {
		c.Lease = 60 * time.Second
	}
	if c.TimerLead == 0 {
		c.TimerLead = time.Second
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 256
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
	if len(c.NameServers) == 0 {
		errs = append(errs, errors.New("rocketmq: Config.NameServers is required (host:port of at least one name server)"))
	}
	if c.CreateTopics != nil && *c.CreateTopics && len(c.Brokers) == 0 {
		errs = append(errs, errors.New("rocketmq: CreateTopics needs Config.Brokers (the master brokers to create topics on)"))
	}
	if c.Namespace != "" && sanitize(c.Namespace) != c.Namespace {
		errs = append(errs, fmt.Errorf("rocketmq: Namespace %q may only hold ASCII letters, digits, '_' and '-'", c.Namespace))
	}
	if c.QueueNums < 1 {
		errs = append(errs, fmt.Errorf("rocketmq: QueueNums %d must be at least 1", c.QueueNums))
	}
	for _, topic := range c.FIFOTopics {
		if slices.Contains(c.TransactionTopics, topic) {
			errs = append(errs, fmt.Errorf("rocketmq: topic %s is in both FIFOTopics and TransactionTopics: a RocketMQ topic has one message type", topic))
		}
	}
	if c.MaxInFlight < 1 {
		errs = append(errs, fmt.Errorf("rocketmq: MaxInFlight %d must be at least 1", c.MaxInFlight))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"ConnectTimeout", c.ConnectTimeout}, {"PublishTimeout", c.PublishTimeout}, {"Lease", c.Lease}, {"TimerLead", c.TimerLead}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("rocketmq: %s %v is negative", d.name, d.v))
		}
	}
	return errors.Join(errs...)
}

// sanitize maps s to a legal RocketMQ name: ASCII letters, digits, '_'
// and '-' stay, every other character becomes '_'.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// Names, all under Config.Namespace.
const (
	retrySuffix = "_retry"
	dlqTopic    = "msgcontract_dlq"
	opsTopic    = "msgcontract_dlq_ops"
)

func (t *Transport) topicName(topic string) string { return t.cfg.Namespace + sanitize(topic) }

// eventType is the message type the RocketMQ topic of msgcontract topic
// topic is created with.
func (t *Transport) eventType(topic string) string {
	switch {
	case slices.Contains(t.cfg.TransactionTopics, topic):
		return typeTransaction
	case slices.Contains(t.cfg.FIFOTopics, topic):
		return typeFIFO
	}
	return typeNormal
}
func (t *Transport) retryTopic(group string) string {
	return t.cfg.Namespace + sanitize(group) + retrySuffix
}
func (t *Transport) groupName(group string) string { return t.cfg.Namespace + sanitize(group) }
func (t *Transport) dlqName() string               { return t.cfg.Namespace + dlqTopic }
func (t *Transport) opsName() string               { return t.cfg.Namespace + opsTopic }
