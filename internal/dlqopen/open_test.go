package dlqopen_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/internal/dlqopen"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs/natsserver"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

func TestOpenSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "q.db")
	q, err := sqlitequeue.Open(ctx, path, sqlitequeue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	q.Close()
	for _, target := range []string{path, "sqlite:" + path} {
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
	missing := filepath.Join(t.TempDir(), "missing.db")
	if _, err := dlqopen.Open(ctx, missing); err == nil {
		t.Error("want an error for a queue file that does not exist")
	} else if _, serr := os.Stat(missing); !errors.Is(serr, fs.ErrNotExist) {
		t.Errorf("opening a missing queue created %s", missing)
	}
	if _, err := dlqopen.Open(ctx, "mqtt://x"); err == nil {
		t.Error("want an error for an unsupported scheme")
	}
}

func TestOpenNATS(t *testing.T) {
	t.Parallel()
	ns, err := natsserver.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	ctx := context.Background()
	s, err := dlqopen.Open(ctx, ns.URL()+"?stream=CUSTOM&prefix=app")
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
