package natsjs_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs"
	"github.com/msgcontract/msgcontract/runtime-go/transport/transporttest"
)

func TestSuite(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T, lease time.Duration) transporttest.Transport {
		ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
			StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
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
		t.Cleanup(func() { nc.Close(); ns.Shutdown(); ns.WaitForShutdown() })
		tr, err := natsjs.New(context.Background(), natsjs.Config{Conn: nc, AckWait: lease, FetchWait: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	})
}
