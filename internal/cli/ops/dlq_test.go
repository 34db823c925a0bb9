package ops

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// deadLetterTwo fills a real embedded queue with two dead-letter records.
func deadLetterTwo(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "queue.db")
	tr, err := sqlitequeue.Open(ctx, path, sqlitequeue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	sub, err := tr.Subscribe(ctx, "payments", []string{"order-event"})
	if err != nil {
		t.Fatal(err)
	}
	env := &envelopepb.Envelope{MessageId: "m1", BizKey: "order_id:1:PAY_SUCCESS", EventType: "PAY_SUCCESS", Topic: "order-event", RetryCount: 6}
	if err := tr.Publish(ctx, "order-event", env); err != nil {
		t.Fatal(err)
	}
	if err := tr.PublishRaw(ctx, "order-event", []byte("garbage")); err != nil {
		t.Fatal(err)
	}
	ds, err := sub.Fetch(ctx, 2)
	if err != nil || len(ds) != 2 {
		t.Fatalf("fetch: %v, %d deliveries", err, len(ds))
	}
	now := time.Now()
	body, _ := envelope.Marshal(env)
	recs := []*dlq.Record{
		{Topic: "order-event", Group: "payments", Handler: "pay", EventType: "PAY_SUCCESS", BizKey: env.BizKey, MessageID: "m1",
			Envelope: body, Reason: dlq.ReasonRetriesExhausted, Code: 50301, Error: "ledger answered 503", Attempts: 7,
			FirstFailedAt: now, LastFailedAt: now},
		{Topic: "order-event", Group: "payments", Envelope: []byte("garbage"), Reason: dlq.ReasonDecode, Code: -3,
			Error: "cannot decode", FirstFailedAt: now, LastFailedAt: now},
	}
	for i, d := range ds {
		if err := sub.DeadLetter(ctx, d, recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestDLQCommands(t *testing.T) {
	t.Parallel()
	q := deadLetterTwo(t)
	code, out, errOut := run(t, "dlq", "list", "--queue", q)
	if code != cli.ExitOK || !strings.Contains(out, "retries_exhausted") || !strings.Contains(out, "decode") || !strings.Contains(out, "2 records") {
		t.Fatalf("list: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, "dlq", "list", "--queue", q, "--reason", "decode")
	if code != cli.ExitOK || !strings.Contains(out, "1 record\n") {
		t.Fatalf("filtered list: exit %d\n%s", code, out)
	}
	code, out, _ = run(t, "dlq", "show", "--queue", q, "1")
	if code != cli.ExitOK || !strings.Contains(out, `"biz_key": "order_id:1:PAY_SUCCESS"`) || !strings.Contains(out, `"retry_count": 6`) {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	// Times that were set are shown; a time never set (not replayed yet)
	// is left out rather than shown as 0001-01-01.
	if !strings.Contains(out, `"first_failed_at": "`) || strings.Contains(out, "last_replayed_at") || strings.Contains(out, "0001-01-01") {
		t.Errorf("show: want first_failed_at and no never-set last_replayed_at:\n%s", out)
	}
	if code, _, errOut = run(t, "dlq", "show", "--queue", q, "99"); code != cli.ExitFindings || !strings.Contains(errOut, "no dead-letter record 99") {
		t.Fatalf("show unknown: exit %d %s", code, errOut)
	}
	if code, _, errOut = run(t, "dlq", "purge", "--queue", q); code != cli.ExitUsage || !strings.Contains(errOut, "purge what?") {
		t.Fatalf("unfiltered purge: exit %d %s", code, errOut)
	}
	if code, _, errOut = run(t, "dlq", "replay", "--queue", q); code != cli.ExitUsage || !strings.Contains(errOut, "replay what?") {
		t.Fatalf("unfiltered replay: exit %d %s", code, errOut)
	}
	if code, _, errOut = run(t, "dlq", "replay", "--queue", q, "--reason", "no_such_reason"); code != cli.ExitUsage || !strings.Contains(errOut, "no_such_reason") {
		t.Fatalf("replay with an unknown reason: exit %d %s", code, errOut)
	}
	code, out, _ = run(t, "dlq", "replay", "--queue", q, "--reason", "retries_exhausted")
	if code != cli.ExitOK || !strings.Contains(out, "1 record replayed") {
		t.Fatalf("replay: exit %d\n%s", code, out)
	}
	// The replayed envelope is back on the topic with retry_count reset.
	tr, err := sqlitequeue.Open(context.Background(), q, sqlitequeue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	sub, _ := tr.Subscribe(context.Background(), "payments", []string{"order-event"})
	ds, err := sub.Fetch(context.Background(), 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("after replay: %v, %d deliveries", err, len(ds))
	}
	env, err := envelope.Unmarshal(ds[0].Body)
	if err != nil || env.GetRetryCount() != 0 || env.GetBizKey() != "order_id:1:PAY_SUCCESS" {
		t.Fatalf("replayed envelope %v, %v", env, err)
	}
	// --all takes the record not replayed yet: the undecodable one, which
	// has nothing to re-publish and is reported.
	code, out, errOut = run(t, "dlq", "replay", "--queue", q, "--all")
	if code != cli.ExitFindings || !strings.Contains(out, "0 records replayed") || !strings.Contains(errOut, "cannot replay 2") {
		t.Fatalf("replay --all: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = run(t, "dlq", "purge", "--queue", q, "--all")
	if code != cli.ExitOK || !strings.Contains(out, "2 records purged") {
		t.Fatalf("purge: exit %d\n%s", code, out)
	}
	if code, _, errOut = run(t, "dlq", "list"); code != cli.ExitUsage || !strings.Contains(errOut, "exactly one transport") {
		t.Fatalf("no transport: exit %d %s", code, errOut)
	}
}
