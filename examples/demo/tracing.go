package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"google.golang.org/protobuf/proto"

	paymentv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/tracing"
)

// The environment variables of tracing: the OTLP/HTTP endpoint every
// service exports to (OpenTelemetry's own variable, which the Java and
// Python SDKs read too) and the Jaeger query service the run's trace is
// read from (scripts/with-jaeger.sh sets both).
const (
	otlpEnv     = "OTEL_EXPORTER_OTLP_ENDPOINT"
	jaegerUIEnv = "MSGCONTRACT_JAEGER_UI"
)

// Service names of the demo's spans (resource service.name).
const (
	svcOrders  = "order-service"
	svcRelay   = "outbox-relay"
	svcPayment = "payment-callback"
	svcRecon   = "reconciliation"
)

// otelPom is the Maven project of the Java order service's OpenTelemetry
// SDK (autoconfigure, OTLP over the JDK's HttpClient).
const otelPom = "examples/demo/otel/pom.xml"

// demoTracing holds the Go side's tracer providers: one per service, as
// they would run in processes of their own.
type demoTracing struct {
	relay, payment *tracing.Tracer
	providers      []*sdktrace.TracerProvider
}

// startTracing exports the relay's and the payment service's spans to the
// OTLP/HTTP endpoint; system is messaging.system.
func startTracing(ctx context.Context, endpoint, system string) (*demoTracing, error) {
	t := &demoTracing{}
	for _, svc := range []string{svcRelay, svcPayment} {
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(strings.TrimRight(endpoint, "/")+"/v1/traces"))
		if err != nil {
			return nil, fmt.Errorf("tracing: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
			sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(svc))))
		t.providers = append(t.providers, tp)
	}
	t.relay = tracing.New(t.providers[0], system)
	t.payment = tracing.New(t.providers[1], system)
	return t, nil
}

// shutdown flushes every span still buffered.
func (t *demoTracing) shutdown(ctx context.Context) error {
	var errs []error
	for _, tp := range t.providers {
		errs = append(errs, tp.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// messagingSystem is messaging.system of a demo transport.
func messagingSystem(transport string) string {
	switch transport {
	case "nats", "kafka":
		return transport
	}
	return "msgcontract_sqlite"
}

// javaTracing returns the classpath entries and environment the Java order
// service exports its spans with: the SDK from otelPom, configured by
// OTEL_* variables (GlobalOpenTelemetry's autoconfigure).
func javaTracing(ctx context.Context, endpoint, work string) (cp []string, env []string, err error) {
	out := filepath.Join(work, "otel-classpath.txt")
	cmd := exec.CommandContext(ctx, "mvn", "-B", "-q", "-f", otelPom, "dependency:build-classpath", "-Dmdep.outputFile="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, nil, fmt.Errorf("java tracing: mvn: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return nil, nil, err
	}
	cp = strings.Split(strings.TrimSpace(string(b)), string(os.PathListSeparator))
	env = []string{
		"OTEL_JAVA_GLOBAL_AUTOCONFIGURE_ENABLED=true", "OTEL_SERVICE_NAME=" + svcOrders,
		otlpEnv + "=" + endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=none", "OTEL_LOGS_EXPORTER=none",
		"OTEL_BSP_SCHEDULE_DELAY=200",
	}
	return cp, env, nil
}

// withoutOTLP is env without OpenTelemetry's endpoint variable: with
// tracing off no service exports.
func withoutOTLP(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "OTEL_") {
			out = append(out, kv)
		}
	}
	return out
}

// payTrace returns the trace id the Java order service gave orderID's
// PaySuccess (every copy carries it), read from the outbox.
func payTrace(ctx context.Context, ordersDB *sql.DB, orderID string) (string, error) {
	rows, err := ordersDB.QueryContext(ctx, `SELECT envelope FROM msg_outbox ORDER BY id`)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return "", err
		}
		env, err := envelope.Unmarshal(body)
		if err != nil || env.GetEventType() != paymentv1.PaySuccessSpec.EventType {
			continue
		}
		var m paymentv1.PaySuccess
		if proto.Unmarshal(env.GetPayload(), &m) != nil || m.GetOrderId() != orderID {
			continue
		}
		if tp := env.GetTrace().GetTraceparent(); len(tp) == 55 {
			return tp[3:35], nil
		}
		return "", fmt.Errorf("the PaySuccess of order %s carries no traceparent", orderID)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no PaySuccess of order %s in the outbox", orderID)
}
