//go:build rabbitmq

// Command rabbitmqpeer is the Go side of the interop tests of
// runtime-java/rabbitmq's JUnit suite (run by integration/javarabbitmq): a
// member of a group on runtime-go's rabbitmq transport, for one event whose
// payload is a google.protobuf.StringValue.
//
//	rabbitmqpeer consume -url U -prefix P -db FILE -group G -topic T -event-type E -handler H [-note go] [-poison-suffix S]
//	rabbitmqpeer publish -url U -prefix P -topic T -event-type E -n N -key-prefix K
//
// consume runs runtime-go's consumer and inserts (value, note) into the
// SQLite table effects for each message it handles; a value ending with
// -poison-suffix fails non-retryably (code 40001), so runtime-go writes its
// dead letter to P.dlq. It prints "rabbitmqpeer: running" once the group's
// queue exists and runs until SIGTERM or SIGINT. publish publishes N events
// with values K0…K(N-1) and exits.
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
	"syscall"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
)

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "consume" && os.Args[1] != "publish") {
		fmt.Fprintln(os.Stderr, "usage: rabbitmqpeer consume|publish [flags]")
		os.Exit(2)
	}
	mode := os.Args[1]
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	url := fs.String("url", os.Getenv("MSGCONTRACT_TEST_RABBITMQ"), "the broker's AMQP URL")
	prefix := fs.String("prefix", "", "rabbitmq.Config.Prefix")
	dbPath := fs.String("db", "", "SQLite business database (table effects(biz_key, note) must exist)")
	group := fs.String("group", "", "group")
	topic := fs.String("topic", "", "topic")
	eventType := fs.String("event-type", "", "event type")
	handler := fs.String("handler", "", "handler name (the dedup key's second half)")
	note := fs.String("note", "go", "written beside each effect")
	poison := fs.String("poison-suffix", "", "values ending with this fail non-retryably (code 40001)")
	n := fs.Int("n", 0, "publish: how many events")
	keyPrefix := fs.String("key-prefix", "go-", "publish: the values are this and 0…n-1")
	_ = fs.Parse(os.Args[2:])
	if *url == "" || *prefix == "" || *topic == "" || *eventType == "" {
		fmt.Fprintln(os.Stderr, "rabbitmqpeer: -url, -prefix, -topic and -event-type are required")
		os.Exit(2)
	}
	spec := &event.Spec{
		FullName: "google.protobuf.StringValue", Topic: *topic, EventType: *eventType,
		// The JUnit suite's Fixture.POLICY and RULES.
		Policy: backoff.Policy{BaseMs: 200, Multiplier: 2, JitterMs: 100, MaxDelayMs: 2000, MaxRetries: 3},
		Rules: classify.Rules{Ranges: []classify.Range{
			{From: 40000, To: 49999, Retryable: false, Name: "business"},
			{From: 50000, To: 59999, Retryable: true, Name: "system"},
		}, UnclassifiedRetryable: true},
	}
	var err error
	if mode == "publish" {
		err = publish(*url, *prefix, spec, *n, *keyPrefix)
	} else {
		if *dbPath == "" || *group == "" || *handler == "" {
			fmt.Fprintln(os.Stderr, "rabbitmqpeer consume: -db, -group and -handler are required")
			os.Exit(2)
		}
		err = consume(*url, *prefix, spec, *dbPath, *group, *handler, *note, *poison)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rabbitmqpeer:", err)
		os.Exit(1)
	}
}

func publish(url, prefix string, spec *event.Spec, n int, keyPrefix string) error {
	ctx := context.Background()
	tr, err := rabbitmq.New(ctx, rabbitmq.Config{URL: url, Prefix: prefix})
	if err != nil {
		return err
	}
	defer tr.Close()
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
	fmt.Printf("rabbitmqpeer: published %d\n", n)
	return nil
}

func consume(url, prefix string, spec *event.Spec, dbPath, group, handler, note, poison string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	tr, err := rabbitmq.New(ctx, rabbitmq.Config{URL: url, Prefix: prefix,
		Topology: map[string][]string{spec.Topic: {group}}})
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
	err = consumer.Register(c, handler, spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			if poison != "" && strings.HasSuffix(m.GetValue(), poison) {
				return classify.NewError(40001, "rabbitmqpeer: "+m.GetValue()+" is poison")
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, note) VALUES ($1, $2)`, m.GetValue(), note)
			return err
		})
	if err != nil {
		return err
	}
	fmt.Println("rabbitmqpeer: running")
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
