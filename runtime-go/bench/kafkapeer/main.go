//go:build kafka

// Command kafkapeer is the Go member of a consumer group that a test shares
// with consumers in other languages (runtime-java/kafka's JUnit tests): it
// runs runtime-go's consumer on the kafka transport for one event whose
// payload is a google.protobuf.StringValue, and inserts (biz_key, -note)
// into the SQLite table effects for each message it handles. It runs until
// SIGTERM or SIGINT, then closes the consumer (committing what is done).
//
//	kafkapeer -db FILE -namespace NS -group G -topic T -event-type E -handler H -note go [-registry URL]
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
)

func main() {
	brokers := flag.String("brokers", os.Getenv("MSGCONTRACT_KAFKA_BROKERS"), "seed brokers, host:port[,...]")
	dbPath := flag.String("db", "", "SQLite business database (table effects(biz_key, note) must exist)")
	ns := flag.String("namespace", "", "kafka.Config.Namespace")
	group := flag.String("group", "", "consumer group")
	topic := flag.String("topic", "", "topic")
	eventType := flag.String("event-type", "", "event type")
	handler := flag.String("handler", "", "handler name (the dedup key's second half)")
	note := flag.String("note", "go", "written beside each effect")
	session := flag.Duration("session-timeout", 6*time.Second, "consumer group session timeout")
	failSuffix := flag.String("fail-once-suffix", "", "values ending with this fail once (retryably) in this process")
	registry := flag.String("registry", "", "schema registry URL: read records in the Confluent wire format (kafka.Config.Confluent)")
	flag.Parse()
	if *dbPath == "" || *group == "" || *topic == "" || *eventType == "" || *handler == "" || *brokers == "" {
		fmt.Fprintln(os.Stderr, "kafkapeer: -brokers, -db, -group, -topic, -event-type and -handler are required")
		os.Exit(2)
	}
	if err := run(*brokers, *dbPath, *ns, *group, *topic, *eventType, *handler, *note, *failSuffix, *registry, *session); err != nil {
		fmt.Fprintln(os.Stderr, "kafkapeer:", err)
		os.Exit(1)
	}
}

func run(brokers, dbPath, ns, group, topic, eventType, handler, note, failSuffix, registry string, session time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	spec := &event.Spec{
		FullName: "google.protobuf.StringValue", Topic: topic, EventType: eventType,
		Policy: backoff.Policy{BaseMs: 200, Multiplier: 2, JitterMs: 100, MaxDelayMs: 2000, MaxRetries: 3},
		Rules: classify.Rules{Ranges: []classify.Range{
			{From: 40000, To: 49999, Retryable: false, Name: "business"},
			{From: 50000, To: 59999, Retryable: true, Name: "system"},
		}, UnclassifiedRetryable: true},
	}
	kc := kafka.Config{Brokers: strings.Split(brokers, ","), Namespace: ns, SessionTimeout: session}
	if registry != "" {
		kc.Confluent = &kafka.ConfluentConfig{RegistryURL: registry}
	}
	tr, err := kafka.New(ctx, kc)
	if err != nil {
		return err
	}
	defer tr.Close()
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
	var mu sync.Mutex
	failed := map[string]bool{}
	err = consumer.Register(c, handler, spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			if failSuffix != "" && strings.HasSuffix(m.GetValue(), failSuffix) {
				mu.Lock()
				first := !failed[m.GetValue()]
				failed[m.GetValue()] = true
				mu.Unlock()
				if first {
					return fmt.Errorf("kafkapeer: %s fails once", m.GetValue()) // unclassified: retryable
				}
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, note) VALUES ($1, $2)`, m.GetValue(), note)
			return err
		})
	if err != nil {
		return err
	}
	fmt.Println("kafkapeer: running")
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
