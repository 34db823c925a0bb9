package main

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq"
)

// The RocketMQ backend runs against the RocketMQ scripts/with-rocketmq.sh
// started: its name server and broker addresses, its dir and the script
// that starts it again on the same data and ports.
const (
	envRocketNamesrv = "MSGCONTRACT_ROCKETMQ_NAMESRV"
	envRocketBroker  = "MSGCONTRACT_ROCKETMQ_BROKER"
	envRocketProxy   = "MSGCONTRACT_ROCKETMQ_PROXY"
	envRocketDir     = "MSGCONTRACT_ROCKETMQ_DIR"
	envRocketStart   = "MSGCONTRACT_ROCKETMQ_START"
)

// rocketQuiet is how long the run must have stayed complete before it
// counts as drained: copies still in flight (a duplicate delivery, a
// handed-back message) settle within a lease and a handler timeout.
const rocketQuiet = lease + 5*time.Second

func rocketConfig(ns string) rocketmq.Config {
	return rocketmq.Config{NameServers: []string{os.Getenv(envRocketNamesrv)}, Brokers: []string{os.Getenv(envRocketBroker)},
		Namespace: ns, Lease: lease, ConnectTimeout: time.Minute,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))}
}

// rocketQueue counts the backlog from the outcome, not from the broker:
// RocketMQ's consumer offsets are not in its Go client's API, and a
// retry copy waiting in the broker's timer wheel is in no topic yet. A
// run is drained when every message that must have an effect has one in
// the business database and every poison message has a dead letter.
type rocketQueue struct {
	tr          *rocketmq.Transport
	ns          string
	db          *sql.DB
	plan        *plan
	restarts    int
	doneSince   time.Time
	lastDLQRead time.Time
	dead        int
}

func startRocketMQ(ctx context.Context, cfg config, p *plan) (*rocketQueue, error) {
	for _, v := range []string{envRocketNamesrv, envRocketBroker, envRocketDir, envRocketStart} {
		if os.Getenv(v) == "" {
			return nil, fmt.Errorf("-transport rocketmq needs %s: run it through scripts/with-rocketmq.sh (make chaos TRANSPORT=rocketmq)", v)
		}
	}
	ns := fmt.Sprintf("chaos%d_", time.Now().UnixNano())
	tr, err := rocketmq.New(ctx, rocketConfig(ns))
	if err != nil {
		return nil, err
	}
	// The group's topics exist before the first publish, and its consumer
	// offsets start at the first message.
	sub, err := tr.Subscribe(ctx, group, []string{benchmsg.Topic})
	if err != nil {
		tr.Close()
		return nil, err
	}
	_ = sub.Close()
	db, _, err := openBusiness(cfg)
	if err != nil {
		tr.Close()
		return nil, err
	}
	return &rocketQueue{tr: tr, ns: ns, db: db, plan: p}, nil
}

func (q *rocketQueue) publish(ctx context.Context, envs []*envelopepb.Envelope) error {
	for _, env := range envs {
		if err := q.tr.Publish(ctx, benchmsg.Topic, env); err != nil {
			return err
		}
	}
	return nil
}

// pending is how many messages have no outcome yet (see rocketQueue); -1
// while the database or the broker does not answer. Once none is left it
// stays 1 until none has been left for rocketQuiet.
func (q *rocketQueue) pending(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var handled int
	err := q.db.QueryRowContext(ctx, `SELECT count(DISTINCT biz_key) FROM effects`).Scan(&handled)
	if err != nil {
		q.doneSince = time.Time{}
		return -1, nil // not created yet, or the database restarts
	}
	n := len(q.plan.good) - handled
	if n <= 0 && time.Since(q.lastDLQRead) > time.Second {
		// The dead letters are read only when the good messages are
		// done: a read scans the whole dead-letter topic.
		recs, err := q.deadLetters(ctx)
		if err != nil {
			q.doneSince = time.Time{}
			return -1, nil
		}
		keys := map[string]bool{}
		for _, r := range recs {
			if q.plan.poison[r.BizKey] {
				keys[r.BizKey] = true
			}
		}
		q.dead, q.lastDLQRead = len(keys), time.Now()
	}
	n = max(n, 0) + len(q.plan.poison) - q.dead
	if n > 0 {
		q.doneSince = time.Time{}
		return n, nil
	}
	if q.doneSince.IsZero() {
		q.doneSince = time.Now()
	}
	if time.Since(q.doneSince) < rocketQuiet {
		return 1, nil
	}
	return 0, nil
}

func (q *rocketQueue) deadLetters(ctx context.Context) ([]dlq.Record, error) {
	return q.tr.List(ctx, dlq.Filter{Topic: benchmsg.Topic, Limit: 1 << 30})
}

func (q *rocketQueue) close() {
	q.tr.Close()
	q.db.Close()
}

// maybeRestart SIGKILLs the broker's JVM (the proxy with the broker in
// it) and starts it again on the same data, once, when a tenth of the
// backlog is done.
func (q *rocketQueue) maybeRestart(n, initial int) error {
	if q.restarts > 0 || n < 0 || initial <= 0 || n > initial*9/10 {
		return nil
	}
	addr := strings.Join([]string{os.Getenv(envRocketNamesrv), os.Getenv(envRocketBroker), os.Getenv(envRocketProxy)}, " ")
	took, err := restartBroker(os.Getenv(envRocketDir), os.Getenv(envRocketStart), addr, "broker.pid")
	if err != nil {
		return err
	}
	q.restarts++
	fmt.Printf("chaos: RocketMQ broker SIGKILLed with %d of %d messages pending and restarted in %v\n", n, initial,
		took.Round(time.Millisecond))
	return nil
}
