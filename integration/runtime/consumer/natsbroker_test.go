package consumer_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs/natsserver"
)

// startNATS runs a real JetStream server in-process, storing in a temp dir.
func startNATS(t *testing.T) *nats.Conn {
	t.Helper()
	ns, err := natsserver.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	nc, err := ns.Connect()
	if err != nil {
		ns.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		nc.Close()
		ns.Close()
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
