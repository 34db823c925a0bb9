//go:build rocketmq

// Command rocketmqpeer is the Go side of the interop tests of
// runtime-java/rocketmq's JUnit suite (run by integration/rocketmqmembers): it
// creates topics (the 5.x Java client cannot), publishes, and consumes as a
// member of a group on runtime-go's rocketmq transport, for one event whose
// payload is a google.protobuf.StringValue.
//
//	rocketmqpeer topics -namesrv N -broker B -namespace NS -topic T [-topic T2 …] [-group G …] [-tx-topic T3 …] [-fifo-topic T4 …] [-fifo-group G2 …]
//	rocketmqpeer publish -namesrv N -broker B -namespace NS -topic T -event-type E -n N -key-prefix K
//	rocketmqpeer consume -namesrv N -broker B -namespace NS -db FILE -group G -topic T -event-type E -handler H [-note go]
//
// topics creates the topics of msgcontract topics T and, for each group G,
// G's retry topic, plus the dead-letter topics, and exits; a -tx-topic is
// created with message type TRANSACTION (a 5.x TxProducer's topic), a
// -fifo-topic with message type FIFO, and a -fifo-group (also a -group) as
// an orderly consumer group. publish publishes
// N events with values K0…K(N-1) and exits. consume runs runtime-go's
// consumer and inserts (value, note) into the SQLite table effects for each
// message it handles; it prints "rocketmqpeer: running" once subscribed and
// runs until SIGTERM or SIGINT.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "topics" && os.Args[1] != "consume" && os.Args[1] != "publish") {
		fmt.Fprintln(os.Stderr, "usage: rocketmqpeer topics|publish|consume [flags]")
		os.Exit(2)
	}
	mode := os.Args[1]
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	namesrv := fs.String("namesrv", os.Getenv("MSGCONTRACT_ROCKETMQ_NAMESRV"), "the name server, host:port")
	broker := fs.String("broker", os.Getenv("MSGCONTRACT_ROCKETMQ_BROKER"), "the broker, host:port (topics are created there)")
	namespace := fs.String("namespace", "", "rocketmq.Config.Namespace")
	var topics, groups, txTopics, fifoTopics, fifoGroups list
	fs.Var(&topics, "topic", "topic (topics: repeatable)")
	fs.Var(&groups, "group", "group (topics: repeatable)")
	fs.Var(&txTopics, "tx-topic", "topics: a topic of transactional messages (repeatable)")
	fs.Var(&fifoTopics, "fifo-topic", "topics: a topic of FIFO messages (repeatable)")
	fs.Var(&fifoGroups, "fifo-group", "topics: an orderly (FIFO) consumer group (repeatable)")
	eventType := fs.String("event-type", "", "event type")
	dbPath := fs.String("db", "", "SQLite business database (table effects(biz_key, note) must exist)")
	handler := fs.String("handler", "", "handler name (the dedup key's second half)")
	note := fs.String("note", "go", "written beside each effect")
	n := fs.Int("n", 0, "publish: how many events")
	keyPrefix := fs.String("key-prefix", "go-", "publish: the values are this and 0…n-1")
	_ = fs.Parse(os.Args[2:])
	if *namesrv == "" || *broker == "" || *namespace == "" || len(topics) == 0 {
		fmt.Fprintln(os.Stderr, "rocketmqpeer: -namesrv, -broker, -namespace and -topic are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	tr, err := rocketmq.New(ctx, rocketmq.Config{NameServers: []string{*namesrv}, Brokers: []string{*broker},
		Namespace: *namespace, TransactionTopics: txTopics, FIFOTopics: fifoTopics, FIFOGroups: fifoGroups, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		fmt.Fprintln(os.Stderr, "rocketmqpeer:", err)
		os.Exit(1)
	}
	defer tr.Close()
	spec := &event.Spec{
		FullName: "google.protobuf.StringValue", Topic: topics[0], EventType: *eventType,
		// The JUnit suite's Fixture.POLICY and RULES.
		Policy: backoff.Policy{BaseMs: 200, Multiplier: 2, JitterMs: 100, MaxDelayMs: 2000, MaxRetries: 3},
		Rules: classify.Rules{Ranges: []classify.Range{
			{From: 40000, To: 49999, Retryable: false, Name: "business"},
			{From: 50000, To: 59999, Retryable: true, Name: "system"},
		}, UnclassifiedRetryable: true},
	}
	switch mode {
	case "topics":
		err = tr.EnsureTopics(ctx, slices.Concat(topics, txTopics, fifoTopics), slices.Concat(groups, fifoGroups))
	case "publish":
		err = publish(ctx, tr, spec, *n, *keyPrefix)
	default:
		if *dbPath == "" || len(groups) != 1 || *handler == "" || *eventType == "" {
			fmt.Fprintln(os.Stderr, "rocketmqpeer consume: -db, one -group, -event-type and -handler are required")
			os.Exit(2)
		}
		err = consume(ctx, tr, spec, *dbPath, groups[0], *handler, *note)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rocketmqpeer:", err)
		os.Exit(1)
	}
}

func publish(ctx context.Context, tr *rocketmq.Transport, spec *event.Spec, n int, keyPrefix string) error {
	for i := range n {
		v := fmt.Sprint(keyPrefix, i)
		env, err := event.NewEnvelope(spec, wrapperspb.String(v), v, event.Options{})
		if err != nil {
			return err
		}
		if err := tr.Publish(ctx, spec.Topic, env); err != nil {
			return fmt.Errorf("publish %s: %w", v, err)
		}
	}
	fmt.Printf("rocketmqpeer: published %d\n", n)
	return nil
}

func consume(ctx context.Context, tr *rocketmq.Transport, spec *event.Spec, dbPath, group, handler, note string) error {
	db, err := sqlitedb.Open(dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: tr, Group: group, Logger: logger})
	if err != nil {
		return err
	}
	err = consumer.Register(c, handler, spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, note) VALUES ($1, $2)`, m.GetValue(), note)
			return err
		})
	if err != nil {
		return err
	}
	fmt.Println("rocketmqpeer: running")
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
