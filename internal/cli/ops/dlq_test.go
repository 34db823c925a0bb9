package ops

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/codegen/model"
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

// deadLetterOne dead-letters env, as a retries_exhausted record whose
// failure times are given in a zone other than UTC, into a new embedded
// queue.
func deadLetterOne(t *testing.T, env *envelopepb.Envelope, failed time.Time) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "queue.db")
	tr, err := sqlitequeue.Open(ctx, path, sqlitequeue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	sub, err := tr.Subscribe(ctx, "payments", []string{env.Topic})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Publish(ctx, env.Topic, env); err != nil {
		t.Fatal(err)
	}
	ds, err := sub.Fetch(ctx, 1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("fetch: %v, %d deliveries", err, len(ds))
	}
	body, _ := envelope.Marshal(env)
	rec := &dlq.Record{Topic: env.Topic, Group: "payments", Handler: "pay", EventType: env.EventType, BizKey: env.BizKey,
		MessageID: env.MessageId, Envelope: body, Reason: dlq.ReasonRetriesExhausted, Code: 50301, Error: "ledger answered 503",
		Attempts: 7, FirstFailedAt: failed, LastFailedAt: failed}
	if err := sub.DeadLetter(ctx, ds[0], rec); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDLQShowDecodesPayload: given the contract, show decodes the payload
// with the event the envelope's event_type names (binary and JSON
// payloads); without it the payload stays base64 in the envelope; every
// time is RFC 3339 in UTC, the envelope's epoch milliseconds included.
func TestDLQShowDecodesPayload(t *testing.T) {
	t.Parallel()
	set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{examplesDir}}, filepath.Join(examplesDir, "shop", "payment", "v1", "payment.proto"))
	if err != nil {
		t.Fatal(err)
	}
	var pay *model.Event
	for _, e := range set.Files[0].Events {
		if e.EventType == "PAY_SUCCESS" {
			pay = e
		}
	}
	if pay == nil {
		t.Fatal("examples' payment.proto has no PAY_SUCCESS event")
	}
	msg := dynamicpb.NewMessage(pay.Desc)
	fields := pay.Desc.Fields()
	msg.Set(fields.ByName("order_id"), protoreflect.ValueOfString("o-17"))
	msg.Set(fields.ByName("amount"), protoreflect.ValueOfInt64(1999))
	cet := time.FixedZone("CET", 3600)
	occurred := time.Date(2026, 12, 5, 10, 41, 7, 123e6, cet) // 09:41:07.123Z
	const proto = "shop/payment/v1/payment.proto"
	for _, asJSON := range []bool{false, true} {
		payload, contentType, err := envelope.EncodePayload(msg, asJSON)
		if err != nil {
			t.Fatal(err)
		}
		env := &envelopepb.Envelope{MessageId: "m1", BizKey: "order_id:o-17:PAY_SUCCESS", EventType: "PAY_SUCCESS", Topic: "order-event",
			OccurredAt: occurred.UnixMilli(), FirstFailedAt: occurred.UnixMilli(), ContentType: contentType, Payload: payload}
		q := deadLetterOne(t, env, occurred)

		code, out, errOut := run(t, "dlq", "show", "--queue", q, "-I", examplesDir, "1", filepath.Join(examplesDir, proto))
		if code != cli.ExitOK {
			t.Fatalf("show with the contract (%s): exit %d\n%s%s", contentType, code, out, errOut)
		}
		for _, want := range []string{
			`"payload_type": "shop.payment.v1.PaySuccess"`,
			`"order_id": "o-17"`, `"amount": "1999"`, `"currency": ""`, // every field, zero ones too
			`"occurred_at": "2026-12-05T09:41:07.123Z"`, `"first_failed_at": "2026-12-05T09:41:07.123Z"`, // envelope
			`"first_failed_at": "2026-12-05T09:41:07`, // record
		} {
			if !strings.Contains(out, want) {
				t.Errorf("show with the contract (%s) lacks %s:\n%s", contentType, want, out)
			}
		}
		if strings.Contains(out, "+01:00") || strings.Contains(out, `"occurred_at": "17`) {
			t.Errorf("show (%s): a time not in UTC RFC 3339:\n%s", contentType, out)
		}

		code, out, _ = run(t, "dlq", "show", "--queue", q, "1")
		if code != cli.ExitOK || strings.Contains(out, `"payload_type"`) || !strings.Contains(out, `"payload": "`) ||
			!strings.Contains(out, `"occurred_at": "2026-12-05T09:41:07.123Z"`) {
			t.Errorf("show without the contract (%s): exit %d; want the payload as base64 in the envelope and RFC 3339 times:\n%s", contentType, code, out)
		}
	}

	// An event_type the contract does not declare: the payload stays bytes,
	// and the reason is given.
	env := &envelopepb.Envelope{MessageId: "m2", BizKey: "k", EventType: "SHIPPED", Topic: "order-event", Payload: []byte{1}}
	q := deadLetterOne(t, env, time.Now())
	code, out, _ := run(t, "dlq", "show", "--queue", q, "-I", examplesDir, "1", filepath.Join(examplesDir, proto))
	if code != cli.ExitOK || !strings.Contains(out, `"payload_error": "no event with event_type \"SHIPPED\"`) || !strings.Contains(out, "PAY_SUCCESS") {
		t.Errorf("show, unknown event_type: exit %d:\n%s", code, out)
	}
	// Contract files that do not exist are a usage error naming the file.
	code, _, errOut := run(t, "dlq", "show", "--queue", q, "1", "no/such.proto")
	if code != cli.ExitUsage || !strings.Contains(errOut, "no/such.proto") {
		t.Errorf("show with a missing contract: exit %d: %s", code, errOut)
	}
}
