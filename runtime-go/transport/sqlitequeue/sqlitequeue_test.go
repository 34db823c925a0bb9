package sqlitequeue_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
	"github.com/msgcontract/msgcontract/runtime-go/transport/transporttest"
)

func TestSuite(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T, lease time.Duration) transporttest.Transport {
		tr, err := sqlitequeue.Open(context.Background(), filepath.Join(t.TempDir(), "q.db"),
			sqlitequeue.Config{Lease: lease, PollInterval: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		return tr
	})
}

func TestRemoveGroup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr, err := sqlitequeue.Open(ctx, filepath.Join(t.TempDir(), "q.db"), sqlitequeue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, g := range []string{"a", "b"} {
		if _, err := tr.Subscribe(ctx, g, []string{"t"}); err != nil {
			t.Fatal(err)
		}
	}
	env := &envelopepb.Envelope{BizKey: "k", EventType: "E"}
	if err := tr.Publish(ctx, "t", env); err != nil {
		t.Fatal(err)
	}
	if n, err := tr.RemoveGroup(ctx, "a"); n != 1 || err != nil {
		t.Fatalf("removed %d rows, %v", n, err)
	}
	if err := tr.Publish(ctx, "t", env); err != nil {
		t.Fatal(err)
	}
	if n, _ := tr.Backlog(ctx, ""); n != 2 {
		t.Fatalf("pending = %d, want 2 (group b's rows only)", n)
	}
}
