package kafka_test

import (
	"context"
	"crypto/tls"
	"database/sql"
	"log"
	"os"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
)

// A service on a TLS + SASL/SCRAM cluster: the options go to every
// franz-go client the transport makes; the consumer runs on it as on any
// transport.
func ExampleNew() {
	ctx := context.Background()
	tr, err := kafka.New(ctx, kafka.Config{
		Brokers: []string{"kafka-1:9093", "kafka-2:9093"},
		Opts: []kgo.Opt{
			kgo.DialTLSConfig(&tls.Config{MinVersion: tls.VersionTLS12}),
			kgo.SASL(scram.Auth{User: "payments", Pass: os.Getenv("KAFKA_PASSWORD")}.AsSha512Mechanism()),
		},
		Partitions: 12, ReplicationFactor: 3, // for the topics it creates
	})
	if err != nil {
		log.Fatal(err) // e.g. kafka: broker kafka-1:9093,kafka-2:9093 unreachable after 10s: ...
	}
	defer tr.Close()
	var db *sql.DB // the business database
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.Postgres, Subscriber: tr, Group: "payment-callback"})
	if err != nil {
		log.Fatal(err)
	}
	_ = c // register handlers, then c.Run(ctx)
}
