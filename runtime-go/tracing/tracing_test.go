package tracing_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// One trace from the producer through the outbox relay to the consumer
// and its retry: the producer's span writes the envelope to the outbox,
// the relay's send span continues it, and both consumer attempts are
// children of (and linked to) the send span, with the messaging and
// msgcontract attributes and their outcomes; every span the runtime
// started matches testdata/otel/messaging-spans.tsv.
func TestProducerRelayConsumerShareOneTrace(t *testing.T) {
	t.Parallel()
	// With the queue in its own file the consumer leases each fetch; with
	// the queue in the business file it reads the fetch inside the business
	// transaction (the folded path). Both must trace alike. As "kafka" (the
	// embedded queue dressed as a partitioned log, see located) the process
	// spans carry the record's partition and offset, and with a broker
	// address every span carries server.address and server.port.
	for _, tc := range []struct {
		name                string
		queueInBusinessFile bool
		kafka               bool
	}{{"queue_in_own_file", false, false}, {"queue_in_business_file", true, false}, {"kafka", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testOneTrace(t, tc.queueInBusinessFile, tc.kafka)
		})
	}
}

func testOneTrace(t *testing.T, queueInBusinessFile, kafka bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rec, tp := recorded(t)
	system, k := "msgcontract_sqlite", known{}
	var opts []tracing.Option
	if kafka {
		system, k = "kafka", known{server: true, kafka: true}
		opts = append(opts, tracing.WithServer("broker.test", 9092))
	}
	tracer := tracing.New(tp, system, opts...)

	dir := t.TempDir()
	db := openBusiness(ctx, t, dir)
	var queue *sqlitequeue.Transport
	var err error
	if queueInBusinessFile {
		queue, err = sqlitequeue.New(ctx, sqlitequeue.Config{DB: db, PollInterval: 10 * time.Millisecond})
	} else {
		queue, err = sqlitequeue.Open(ctx, filepath.Join(dir, "queue.db"), sqlitequeue.Config{PollInterval: 10 * time.Millisecond})
	}
	if err != nil {
		t.Fatal(err)
	}
	defer queue.Close()
	spec := &event.Spec{FullName: "msgcontract.v1.LastError", Topic: "orders", EventType: "ORDER_PAID",
		Policy: backoff.Policy{BaseMs: 10, Multiplier: 2, MaxDelayMs: 100, MaxRetries: 3},
		Rules:  classify.Rules{UnclassifiedRetryable: true}}

	// The producer: its span is current while it writes the outbox row.
	pctx, producer := tp.Tracer("test").Start(ctx, "pay order")
	env := writeOutbox(pctx, t, db, spec)
	producer.End()

	relay, err := outbox.NewRelay(outbox.RelayConfig{DB: db, Dialect: sqldb.SQLite, Publisher: queue, Tracer: tracer})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := relay.Flush(ctx); err != nil || n != 1 {
		t.Fatalf("relay flush: %d %v", n, err)
	}

	handled := make(chan struct{})
	var subscriber transport.Subscriber = queue
	if kafka {
		subscriber = located{queue}
	}
	var handlerSpans []trace.SpanContext
	// The span ends after the commit, the ack's after the acknowledgement:
	// run until both consumer spans and the handled attempt's ack ended.
	consume(ctx, t, db, subscriber, tracer, spec, func(ctx context.Context, _ *sql.Tx, _ *envelopepb.LastError) error {
		handlerSpans = append(handlerSpans, trace.SpanContextFromContext(ctx))
		if e, _ := consumer.EnvelopeFrom(ctx); e.GetRetryCount() == 0 {
			return classify.NewError(50301, "ledger down")
		}
		close(handled)
		return nil
	}, func() bool { return settled(rec.Ended()) })
	select {
	case <-handled:
	default:
		t.Fatal("the retry was never handled")
	}

	spans := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		spans[s.Name()] = append(spans[s.Name()], s)
	}
	if len(spans["pay order"]) != 1 || len(spans["send orders"]) != 1 || len(spans["process orders"]) != 2 ||
		len(spans["ack orders"]) == 0 {
		t.Fatalf("spans: %v", spans)
	}
	checkTable(t, readTable(t), rec.Ended(), system, k)
	root, pub := spans["pay order"][0], spans["send orders"][0]
	traceID := root.SpanContext().TraceID()
	if pub.Parent().SpanID() != root.SpanContext().SpanID() || pub.SpanKind() != trace.SpanKindProducer {
		t.Errorf("send span: parent %v kind %v, want child of the producer's span, kind producer", pub.Parent(), pub.SpanKind())
	}
	wantOutcome := []string{"retry_scheduled", "handled"}
	for i, s := range spans["process orders"] {
		if s.SpanContext().TraceID() != traceID {
			t.Errorf("attempt %d: trace %v, want the producer's %v", i, s.SpanContext().TraceID(), traceID)
		}
		if s.Parent().SpanID() != pub.SpanContext().SpanID() || s.SpanKind() != trace.SpanKindConsumer {
			t.Errorf("attempt %d: parent %v kind %v, want the send span, kind consumer", i, s.Parent().SpanID(), s.SpanKind())
		}
		if links := s.Links(); len(links) != 1 || links[0].SpanContext.SpanID() != pub.SpanContext().SpanID() {
			t.Errorf("attempt %d: links %v, want the send span", i, links)
		}
		attrs := map[attribute.Key]attribute.Value{}
		for _, a := range s.Attributes() {
			attrs[a.Key] = a.Value
		}
		want := map[attribute.Key]string{
			tracing.KeySystem: system, tracing.KeyDestination: "orders", tracing.KeyMessageID: env.GetMessageId(),
			tracing.KeyOperationType: "process", tracing.KeyConsumerGroup: "payments", tracing.KeyBizKey: "order:o1",
			tracing.KeyEventType: "ORDER_PAID", tracing.KeyOutcome: wantOutcome[i],
		}
		for k, v := range want {
			if got := attrs[k].String(); got != v {
				t.Errorf("attempt %d: %s = %q, want %q", i, k, got, v)
			}
		}
		if got := attrs[tracing.KeyRetryCount].AsInt64(); got != int64(i) {
			t.Errorf("attempt %d: retry_count = %d", i, got)
		}
		if i == 0 {
			if s.Status().Code != codes.Error || attrs[tracing.KeyRetryDelay].AsFloat64() <= 0 ||
				attrs[tracing.KeyErrorType].AsString() != "50301" {
				t.Errorf("failed attempt: status %v, delay %v, error.type %v", s.Status(), attrs[tracing.KeyRetryDelay],
					attrs[tracing.KeyErrorType])
			}
		} else if s.Status().Code == codes.Error {
			t.Errorf("handled attempt has status %v", s.Status())
		}
		// The handler ran inside the consumer span.
		if handlerSpans[i].SpanID() != s.SpanContext().SpanID() {
			t.Errorf("attempt %d: handler context span %v, want %v", i, handlerSpans[i].SpanID(), s.SpanContext().SpanID())
		}
	}
}

// Without a span in the context Inject changes nothing; Extract reads
// back what Inject wrote.
func TestInjectExtract(t *testing.T) {
	t.Parallel()
	env := &envelopepb.Envelope{}
	tracing.Inject(context.Background(), env)
	if env.GetTrace() != nil {
		t.Errorf("Inject without a span wrote %v", env.GetTrace())
	}
	if got := tracing.Extract(context.Background(), env); trace.SpanContextFromContext(got).IsValid() {
		t.Error("Extract of an envelope without trace context found a span")
	}
	tp := sdktrace.NewTracerProvider()
	ctx, span := tp.Tracer("t").Start(context.Background(), "s")
	defer span.End()
	tracing.Inject(ctx, env)
	want := "00-" + span.SpanContext().TraceID().String() + "-" + span.SpanContext().SpanID().String() + "-01"
	if env.GetTrace().GetTraceparent() != want {
		t.Errorf("traceparent = %q, want %q", env.GetTrace().GetTraceparent(), want)
	}
	sc := trace.SpanContextFromContext(tracing.Extract(context.Background(), env))
	if sc.TraceID() != span.SpanContext().TraceID() || sc.SpanID() != span.SpanContext().SpanID() || !sc.IsRemote() {
		t.Errorf("extracted %v", sc)
	}
}

// BenchmarkProcessSpan prints what a delivery's span costs: "off" is the
// consumer's path without a Tracer (a nil check and End on a nil span),
// "on" a sampled span with the SDK and no exporter.
func BenchmarkProcessSpan(b *testing.B) {
	env := &envelopepb.Envelope{MessageId: "m", BizKey: "order:1", EventType: "E",
		Trace: &envelopepb.TraceContext{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	for _, on := range []bool{false, true} {
		var tr *tracing.Tracer
		if on {
			tr = tracing.New(sdktrace.NewTracerProvider(), "msgcontract_sqlite")
		}
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				var span trace.Span
				if tr != nil {
					_, span = tr.StartProcess(ctx, "orders", "payments", env)
				}
				tracing.End(span, "handled", nil)
			}
		})
	}
}
