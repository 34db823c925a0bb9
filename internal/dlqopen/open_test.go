package dlqopen_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/msgcontract/msgcontract/internal/dlqopen"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
)

func TestOpenSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, target := range []string{filepath.Join(t.TempDir(), "q.db"), "sqlite:" + filepath.Join(t.TempDir(), "q.db")} {
		s, err := dlqopen.Open(ctx, target)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := s.List(ctx, dlq.Filter{})
		if err != nil || len(recs) != 0 {
			t.Errorf("%s: %v %v", target, recs, err)
		}
		s.Close()
	}
	if _, err := dlqopen.Open(ctx, "amqp://x"); err == nil {
		t.Error("want an error for an unsupported scheme")
	}
}

func TestOpenNATS(t *testing.T) {
	t.Parallel()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		t.Fatal("nats server did not start")
	}
	defer ns.Shutdown()
	ctx := context.Background()
	s, err := dlqopen.Open(ctx, ns.ClientURL()+"?stream=CUSTOM&prefix=app")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if recs, err := s.List(ctx, dlq.Filter{}); err != nil || len(recs) != 0 {
		t.Fatalf("%v %v", recs, err)
	}
	if _, err := s.Get(ctx, "1"); !errors.Is(err, dlq.ErrNotFound) {
		t.Fatalf("get on an empty stream: %v", err)
	}
}
