package consumer_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs"
)

// startNATS runs a real JetStream server in-process, storing in a temp dir.
func startNATS(t *testing.T) *nats.Conn {
	t.Helper()
	ns, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		t.Fatal("nats server did not start")
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		nc.Close()
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return nc
}

var natsBroker = brokerKind{name: "natsjs", open: func(t *testing.T, now func() time.Time) *broker {
	nc := startNATS(t)
	tr, err := natsjs.New(context.Background(), natsjs.Config{Conn: nc, Now: now, FetchWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	drained := func() bool {
		n, err := tr.Backlog(context.Background(), "g")
		return err == nil && n == 0
	}
	return &broker{pub: tr, sub: tr, raw: tr.PublishRaw, dlq: tr, drained: drained, name: "natsjs"}
}}
