package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq"
)

// The variables scripts/with-rocketmq.sh sets; -rocketmq, -rocketmq-broker
// and -rocketmq-proxy default to them.
const (
	rocketmqNamesrvEnv = "MSGCONTRACT_ROCKETMQ_NAMESRV"
	rocketmqBrokerEnv  = "MSGCONTRACT_ROCKETMQ_BROKER"
	rocketmqProxyEnv   = "MSGCONTRACT_ROCKETMQ_PROXY"
)

// RocketMQAddrs locate a RocketMQ 5.x: the name server and the master
// broker runtime-go's transport uses (it creates the run's topics there),
// and the gRPC proxy the Python service's 5.x client uses.
type RocketMQAddrs struct{ NameServer, Broker, Proxy string }

// rocketmqTransport is runtime-go's rocketmq transport on a real broker,
// every topic and group of this run under a namespace of its own. The Go
// payment service's group is a push consumer of runtime-go's; the Python
// reconciliation service's group pops through the proxy with
// runtime-python's RocketMQ member (docs/rocketmq.md: one kind of member
// per group).
type rocketmqTransport struct {
	*rocketmq.Transport
	addrs     RocketMQAddrs
	namespace string
	// outstanding counts what the groups have not settled yet; Run sets
	// it once the databases exist (see queued).
	outstanding func(context.Context) (int, error)
	// raw counts PublishRaw's messages, which no outbox row names: each
	// group owes a decode dead letter for each.
	raw atomic.Int64
}

// PublishRaw publishes bytes that are not an envelope and counts them.
func (t *rocketmqTransport) PublishRaw(ctx context.Context, topic string, body []byte) error {
	if err := t.Transport.PublishRaw(ctx, topic, body); err != nil {
		return err
	}
	t.raw.Add(1)
	return nil
}

func openRocketMQ(ctx context.Context, a RocketMQAddrs) (*rocketmqTransport, error) {
	for _, f := range []struct {
		v   *string
		env string
	}{{&a.NameServer, rocketmqNamesrvEnv}, {&a.Broker, rocketmqBrokerEnv}, {&a.Proxy, rocketmqProxyEnv}} {
		if *f.v == "" {
			*f.v = os.Getenv(f.env)
		}
	}
	if a.NameServer == "" || a.Broker == "" || a.Proxy == "" {
		return nil, fmt.Errorf("-transport rocketmq needs -rocketmq NAMESRV, -rocketmq-broker BROKER and -rocketmq-proxy PROXY (host:port each; or %s, %s and %s); `make demo TRANSPORT=rocketmq` starts a broker",
			rocketmqNamesrvEnv, rocketmqBrokerEnv, rocketmqProxyEnv)
	}
	now := time.Now().UTC()
	t := &rocketmqTransport{addrs: a, namespace: fmt.Sprintf("demo%s%09d_", now.Format("20060102150405"), now.Nanosecond())}
	var err error
	t.Transport, err = rocketmq.New(ctx, rocketmq.Config{NameServers: []string{a.NameServer}, Brokers: []string{a.Broker},
		Namespace: t.namespace})
	if err != nil {
		return nil, err
	}
	// The Python service's 5.x client cannot create topics: the event
	// topic, both groups' retry topics and the dead-letter topics now.
	if err := t.EnsureTopics(ctx, []string{topic}, groups); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

func (t *rocketmqTransport) describe() string {
	return fmt.Sprintf("RocketMQ at %s (proxy %s; topics and groups under %q)", t.addrs.NameServer, t.addrs.Proxy, t.namespace)
}

func (t *rocketmqTransport) pythonArgs() []string {
	return []string{"--rocketmq", t.addrs.Proxy, "--rocketmq-namespace", t.namespace}
}

// queued counts by outcome, as make chaos TRANSPORT=rocketmq does: the
// Go client has no consumer offsets to read, and a retry copy waiting on
// the broker's timer is in no topic yet. What is outstanding is every
// event (biz_key) published so far that a group has neither handled nor
// dead-lettered, and each raw message (the poison) a group has not yet
// dead-lettered as undecodable.
func (t *rocketmqTransport) queued(ctx context.Context, _ []string) (int, error) {
	if t.outstanding == nil {
		return 0, fmt.Errorf("rocketmq: queued before the run's databases were open")
	}
	return t.outstanding(ctx)
}

// settledByOutcome returns t's queued count for the run's databases:
// lost's unsettled (biz_key, group) pairs plus the raw messages each group
// has yet to dead-letter. The reconciliation database is the Python
// service's; until it has its tables, nothing of its group is settled.
func settledByOutcome(t *rocketmqTransport, ordersDB, paymentDB *sql.DB, reconPath string) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		// One read of the dead-letter topic for both groups: each read
		// pulls the whole topic.
		recs, err := t.List(ctx, dlq.Filter{Limit: 1 << 20})
		if err != nil {
			return 0, fmt.Errorf("dead letters: %w", err)
		}
		dead := map[string][]dlq.Record{}
		undecodable := map[string]int{}
		for _, r := range recs {
			dead[r.Group] = append(dead[r.Group], r)
			if r.Reason == dlq.ReasonDecode {
				undecodable[r.Group]++
			}
		}
		owed := 0
		for _, g := range groups {
			owed += max(0, int(t.raw.Load())-undecodable[g])
		}
		reconDB, err := sqlitedb.Open(reconPath)
		if err != nil {
			return 0, err
		}
		defer reconDB.Close()
		n, err := lost(ctx, ordersDB, paymentDB, reconDB, dead)
		if err != nil {
			if strings.Contains(err.Error(), "no such table") {
				return 1, nil // the Python service has not created its tables yet
			}
			return 0, err
		}
		return n + owed, nil
	}
}

// deadLetters reads the group's records of the run's dead-letter topic
// (both languages write there) through dlq.Store, as `msgcontract dlq
// list --rocketmq` does.
func (t *rocketmqTransport) deadLetters(ctx context.Context, group string) ([]dlq.Record, error) {
	return t.List(ctx, dlq.Filter{Group: group, Limit: 1 << 20})
}

// dlqAddr is the run's dead-letter store as dlqopen addresses it
// (rocketmq://namesrv?namespace=NS; `msgcontract dlq --rocketmq NAMESRV
// --namespace NS` on the command line).
func (t *rocketmqTransport) dlqAddr() string {
	return "rocketmq://" + t.addrs.NameServer + "?namespace=" + url.QueryEscape(t.namespace)
}
