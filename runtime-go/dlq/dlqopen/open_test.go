package dlqopen_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/dlq/dlqopen"
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
	if _, err := dlqopen.Open(ctx, "kafka://x"); err == nil {
		t.Error("want an error for an unsupported scheme")
	}
}
