//go:build kafka

package springkafka_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	paymentv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1"
	"github.com/msgcontract/msgcontract/internal/surefire"
	"github.com/msgcontract/msgcontract/internal/testsummary"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka/kafkatest"
)

// latenessLine is what DeliveryTest prints per database: how long after
// its not_before each retry copy ran.
var latenessLine = regexp.MustCompile(`(?m)^retry lateness after not_before \((\w+)\): (.+)$`)

func TestSpringKafka(t *testing.T) {
	for _, v := range []string{"MSGCONTRACT_KAFKA_BROKERS", "MSGCONTRACT_PG_DSN", "MSGCONTRACT_MYSQL_DSN"} {
		if os.Getenv(v) == "" {
			t.Fatalf("%s is not set: run under scripts/with-postgres.sh, scripts/with-mariadb.sh and scripts/with-kafka.sh (make test-spring)", v)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	java := filepath.Join(root, "runtime-java")
	mod := filepath.Join(java, "spring-kafka")
	reports := filepath.Join(mod, "target", "surefire-reports")
	if err := os.RemoveAll(reports); err != nil {
		t.Fatal(err)
	}
	// The starter and the modules it depends on, built and installed; the
	// test filter keeps core's and kafka's suites (make runtime-java, make
	// test-java-kafka) out of this run.
	cmd := exec.Command("mvn", "-B", "-Dstyle.color=never", "-pl", "spring-kafka", "-am", "install",
		"-Dtest=io.msgcontract.spring.kafka.*Test", "-Dsurefire.failIfNoSpecifiedTests=false")
	cmd.Dir = java
	// One trace across Go and Java (TraceAcrossTest): a Go producer's
	// record for the Spring listener, whose outbox event comes back to a Go
	// consumer after the suite.
	ns, producer := publishTraced(t)
	cmd.Env = append(os.Environ(), "MSGCONTRACT_GO_METRICS="+goMetrics(t), "MSGCONTRACT_GO_TRACE_NS="+ns,
		"MSGCONTRACT_GO_TRACE_ID="+producer.TraceID().String(), "MSGCONTRACT_GO_SPAN_ID="+producer.SpanID().String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mvn -pl spring-kafka -am install in runtime-java: %v\n%s", err, surefire.Tail(out, 80))
	}
	ran, skipped := surefire.Reports(t, reports)
	want := surefire.Declared(t, filepath.Join(mod, "src", "test", "java"))
	if ran != want || skipped != 0 {
		t.Fatalf("%d JUnit tests ran, %d skipped; the sources declare %d\n%s", ran, skipped, want, surefire.Tail(out, 40))
	}
	lines := latenessLine.FindAllSubmatch(out, -1)
	if len(lines) == 0 {
		t.Fatalf("DeliveryTest printed no retry lateness line\n%s", surefire.Tail(out, 40))
	}
	for _, m := range lines {
		t.Logf("retry copies ran after their not_before on %s: %s", m[1], m[2])
	}
	checkTraceBackInGo(t, ns, producer, forwardedByJava)
	testsummary.Report(t, "spring", fmt.Sprintf("%d passed, 0 failed", ran))
}

// forwardedByJava is how many "fwd-traced-from-go" events TraceAcrossTest's
// listeners publish through their outboxes: one per database.
const forwardedByJava = 2

// publishTraced publishes PaySuccess "traced-from-go" from runtime-go's
// kafka transport in a producer span ("send order-event", its context in
// the envelope), under a namespace of its own, which it returns with the
// span's context.
func publishTraced(t *testing.T) (string, trace.SpanContext) {
	t.Helper()
	ctx := context.Background()
	ns := kafkatest.Namespace()
	tr, err := kafka.New(ctx, kafka.Config{Brokers: kafkatest.Brokers(t), Namespace: ns, Partitions: 3,
		SessionTimeout: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	env, err := paymentv1.NewPaySuccessEnvelope(&paymentv1.PaySuccess{OrderId: "traced-from-go", Amount: 5, Currency: "EUR"}, event.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(ctx)
	ctx, span := tracing.New(tp, "kafka").StartPublish(ctx, "order-event", env)
	err = tr.Publish(ctx, "order-event", env)
	span.End()
	if err != nil {
		t.Fatal(err)
	}
	return ns, span.SpanContext()
}

// checkTraceBackInGo runs a runtime-go consumer (its own group, with a
// tracer) over ns's order-event until it has handled want events the Java
// listeners forwarded, and checks that each handler ran in a span of the Go
// producer's trace. Those events were made in Java (the trace reached them
// only through the listener's span and ContractOutbox), so the trace went
// Go -> Java -> Go in one piece.
func checkTraceBackInGo(t *testing.T, ns string, producer trace.SpanContext, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "trace.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tr, err := kafka.New(ctx, kafka.Config{Brokers: kafkatest.Brokers(t), Namespace: ns, Partitions: 3,
		SessionTimeout: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: tr, Group: "trace-check-go",
		Tracer: tracing.New(tp, "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []trace.SpanContext
	err = paymentv1.RegisterPaySuccessHandler(c, "trace-check", func(ctx context.Context, _ *sql.Tx, m *paymentv1.PaySuccess) error {
		if strings.HasPrefix(m.GetOrderId(), "fwd-") {
			mu.Lock()
			seen = append(seen, trace.SpanContextFromContext(ctx))
			if len(seen) == want {
				cancel()
			}
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != want {
		t.Fatalf("the Go consumer handled %d events forwarded by the Spring listeners within 90 s, want %d", len(seen), want)
	}
	for _, sc := range seen {
		if !sc.IsValid() || sc.TraceID() != producer.TraceID() {
			t.Errorf("a forwarded event was handled in trace %s, want the Go producer's %s", sc.TraceID(), producer.TraceID())
		}
	}
}

// goMetrics writes the shape of runtime-go's metrics after the outcomes
// MetricsLikeGoTest drives the Spring listener through (handled twice,
// deduplicated, retry_scheduled, dead_lettered; a handler run each but for
// the duplicate; one retry delay; an end-to-end latency per handled): one line per sample, its name, label
// names and the values of outcome and le, sorted, as MetricsLikeGoTest.shape
// reads Micrometer's. Go's handed-back counter, which only Go's consumer
// counts, is left out. It returns the file's path.
func goMetrics(t *testing.T) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	const h, et = "record-payment", "PAY_SUCCESS"
	for _, o := range []string{metrics.OutcomeHandled, metrics.OutcomeHandled, metrics.OutcomeDeduplicated,
		metrics.OutcomeRetryScheduled, metrics.OutcomeDeadLettered} {
		m.Inc(h, et, o)
	}
	for range 4 {
		m.ObserveHandler(h, et, 3*time.Millisecond)
	}
	for range 2 {
		m.ObserveEndToEnd(h, et, 50*time.Millisecond)
	}
	m.ObserveRetryDelay(h, et, 1500*time.Millisecond)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, f := range fams {
		if f.GetName() == metrics.NameHandedBack {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(&text, f); err != nil {
			t.Fatal(err)
		}
	}
	sample := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? .*$`)
	label := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)
	shape := map[string]bool{}
	for _, line := range strings.Split(text.String(), "\n") {
		s := sample.FindStringSubmatch(line)
		if strings.HasPrefix(line, "#") || s == nil || !strings.HasPrefix(s[1], "msgcontract_") {
			continue
		}
		var labels []string
		for _, l := range label.FindAllStringSubmatch(s[2], -1) {
			if l[1] == "le" || l[1] == "outcome" {
				labels = append(labels, l[1]+"="+l[2])
			} else {
				labels = append(labels, l[1])
			}
		}
		sort.Strings(labels)
		shape[s[1]+"{"+strings.Join(labels, ",")+"}"] = true
	}
	lines := make([]string, 0, len(shape))
	for l := range shape {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	path := filepath.Join(t.TempDir(), "go-metrics.txt")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
