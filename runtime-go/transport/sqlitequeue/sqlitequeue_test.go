package sqlitequeue_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

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
