//go:build trace

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/examples/go-consumer/paymentsvc"
	"github.com/msgcontract/msgcontract/internal/traceview"
)

// jaegerTrace is the part of Jaeger's /api/traces answer the test reads.
type jaegerTrace struct {
	TraceID string `json:"traceID"`
	Spans   []struct {
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		ProcessID     string `json:"processID"`
		References    []struct {
			RefType string `json:"refType"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		Tags []struct {
			Key   string `json:"key"`
			Value any    `json:"value"`
		} `json:"tags"`
	} `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

// span is one span of a trace, flattened: its service and tags.
type span struct {
	id, name, service, parent, parentRef string
	tags                                 map[string]string
}

func (t jaegerTrace) spans() []span {
	var out []span
	for _, s := range t.Spans {
		sp := span{id: s.SpanID, name: s.OperationName, service: t.Processes[s.ProcessID].ServiceName, tags: map[string]string{}}
		// The parent: a CHILD_OF reference. A consumer span's parent is
		// also its link (the messaging conventions ask for both), and
		// Jaeger keeps that one reference as FOLLOWS_FROM.
		for _, r := range s.References {
			if r.RefType == "CHILD_OF" || sp.parent == "" {
				sp.parent = r.SpanID
				sp.parentRef = r.RefType
			}
		}
		for _, tag := range s.Tags {
			sp.tags[tag.Key] = fmt.Sprint(tag.Value)
		}
		out = append(out, sp)
	}
	return out
}

func getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// TestTraceEndToEnd runs the demo with every service exporting to a real
// Jaeger (scripts/with-jaeger.sh: OTLP/HTTP and the query API on loopback)
// and reads back, through Jaeger's HTTP API, the trace of the order whose
// payment the ledger failed first: the Java order service's span, the
// outbox relay's send spans, the Go payment-callback's process spans
// (the failed attempt with retry_scheduled, the retry that handled it, the
// duplicates deduplicated) and the Python reconciliation's process spans,
// with the messaging semantic-convention and msgcontract attributes.
func TestTraceEndToEnd(t *testing.T) {
	otlp, ui := os.Getenv(otlpEnv), os.Getenv(jaegerUIEnv)
	if otlp == "" || ui == "" {
		t.Fatalf("$%s and $%s are unset: run under scripts/with-jaeger.sh (make test-trace)", otlpEnv, jaegerUIEnv)
	}
	t.Chdir("../..")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	res, err := Run(ctx, Config{Orders: 8, Transport: "sqlite", WorkDir: t.TempDir(), OTLP: otlp, JaegerUI: ui}, &out)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if !res.OK() {
		t.Fatalf("%s\n%s", res.Line(), out.String())
	}
	if res.TraceID == "" || res.TraceOrder == "" {
		t.Fatalf("no trace in the result: %s", res.TraceLine())
	}
	t.Log(res.TraceLine())

	// Every service is listed, and the order's trace is among the
	// reconciliation service's (the search API the UI uses).
	want := []string{svcOrders, svcRelay, svcPayment, svcRecon}
	var tr jaegerTrace
	var problems []string
	deadline := time.Now().Add(90 * time.Second)
	for {
		problems = nil
		var services struct{ Data []string }
		if err := getJSON(ctx, ui+"/api/services", &services); err != nil {
			t.Fatal(err)
		}
		for _, s := range want {
			if !slices.Contains(services.Data, s) {
				problems = append(problems, "service "+s+" not in /api/services")
			}
		}
		var found struct{ Data []jaegerTrace }
		q := url.Values{"service": {svcRecon}, "limit": {"1000"}, "lookback": {"1h"}}
		if err := getJSON(ctx, ui+"/api/traces?"+q.Encode(), &found); err != nil {
			t.Fatal(err)
		}
		listed := false
		for _, x := range found.Data {
			if x.TraceID == res.TraceID {
				listed, tr = true, x
			}
		}
		if !listed {
			problems = append(problems, "trace "+res.TraceID+" not among service "+svcRecon+"'s traces")
		} else {
			var one struct{ Data []jaegerTrace }
			if err := getJSON(ctx, ui+"/api/traces/"+res.TraceID, &one); err != nil {
				t.Fatal(err)
			}
			if len(one.Data) != 1 {
				t.Fatalf("/api/traces/%s: %d traces", res.TraceID, len(one.Data))
			}
			tr = one.Data[0]
			problems = append(problems, checkOrderTrace(tr, res.TraceOrder)...)
		}
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if len(problems) > 0 {
		for _, s := range tr.spans() {
			t.Logf("span %s %q service=%s parent=%s (%s) tags=%v", s.id, s.name, s.service, s.parent, s.parentRef, s.tags)
		}
		t.Fatalf("trace %s of order %s:\n  %s", res.TraceID, res.TraceOrder, strings.Join(problems, "\n  "))
	}
	t.Logf("trace %s: %d spans from %v", res.TraceID, len(tr.Spans), want)
	checkTraceView(t, ui, res.TraceID, tr, want)
}

// checkTraceView fetches the page the demo serves for the trace
// (internal/traceview, reading this Jaeger) and checks that it names the
// four services and draws the Go consumer's attempts: the one the ledger
// failed, red with its retry delay, and the retry that handled it.
func checkTraceView(t *testing.T, jaeger, traceID string, tr jaegerTrace, services []string) {
	srv := httptest.NewServer(traceview.Handler(traceview.Config{Jaeger: jaeger}))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/trace/" + traceID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	page := string(body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("trace view: %s\n%s", resp.Status, page)
	}
	for _, s := range services {
		if !strings.Contains(page, `<span class="svc">`+s+`</span>`) {
			t.Errorf("trace view: no row of service %s", s)
		}
	}
	rows := map[string]string{}
	for _, chunk := range strings.Split(page, `<li id="span-`)[1:] {
		id, _, _ := strings.Cut(chunk, `"`)
		rows[id], _, _ = strings.Cut(chunk, "</summary>")
	}
	if len(rows) != len(tr.Spans) {
		t.Errorf("trace view: %d rows for %d spans", len(rows), len(tr.Spans))
	}
	failed, retried := 0, 0
	for _, s := range tr.spans() {
		if s.service != svcPayment || s.name != "process order-event" {
			continue
		}
		row := rows[s.id]
		switch s.tags["msgcontract.outcome"] {
		case "retry_scheduled":
			if strings.Contains(row, ` error"`) && strings.Contains(row, `<b>msgcontract.retry_delay_seconds</b>=`+s.tags["msgcontract.retry_delay_seconds"]) {
				failed++
			}
		case "handled":
			if n := s.tags["msgcontract.retry_count"]; n != "0" && strings.Contains(row, `<b>msgcontract.retry_count</b>=`+n) {
				retried++
			}
		}
	}
	if failed == 0 || retried == 0 {
		t.Errorf("trace view: %d failed attempts drawn red with their delay, %d retries with their retry_count; want both", failed, retried)
	}
	t.Logf("trace view: %d rows, %d failed attempts and %d retries drawn", len(rows), failed, retried)
}

// checkOrderTrace returns what the trace of orderID's payment lacks.
func checkOrderTrace(tr jaegerTrace, orderID string) []string {
	var problems []string
	spans := tr.spans()
	byService := map[string][]span{}
	for _, s := range spans {
		byService[s.service] = append(byService[s.service], s)
	}
	// The Java producer: the order's transaction, the root.
	var root span
	for _, s := range byService[svcOrders] {
		if s.name == "OrderService.pay" && s.tags["order.id"] == orderID && s.parent == "" {
			root = s
		}
	}
	if root.id == "" {
		problems = append(problems, "no root span OrderService.pay of order "+orderID+" from "+svcOrders)
	}
	// The relay: one producer span per copy the Java service wrote, each a
	// child of the order's span.
	publishes := map[string]bool{}
	for _, s := range byService[svcRelay] {
		if s.name == "send order-event" && s.parent == root.id && s.tags["span.kind"] == "producer" &&
			s.tags["messaging.operation.type"] == "send" {
			publishes[s.id] = true
		}
	}
	if len(publishes) < 2 {
		problems = append(problems, fmt.Sprintf("%d relay spans \"send order-event\" under the order's span, want one per copy (2 or 3)", len(publishes)))
	}
	// Both consumers: process spans under the relay's, with the
	// conventions' attributes; the Go one with the failed attempt and the
	// retry that handled it.
	consumer := func(svc, group string, wantOutcomes ...string) {
		outcomes := map[string]int{}
		retried := false
		for _, s := range byService[svc] {
			if s.name != "process order-event" {
				continue
			}
			if !publishes[s.parent] {
				problems = append(problems, fmt.Sprintf("%s span %s: parent %s is no relay span", svc, s.id, s.parent))
			}
			for k, v := range map[string]string{
				"span.kind": "consumer", "messaging.system": "msgcontract_sqlite", "messaging.destination.name": "order-event",
				"messaging.operation.type": "process", "messaging.consumer.group.name": group,
				"msgcontract.event_type": "PAY_SUCCESS", "msgcontract.biz_key": "order_id:" + orderID + ":PAY_SUCCESS",
			} {
				if s.tags[k] != v {
					problems = append(problems, fmt.Sprintf("%s span %s: %s=%q, want %q", svc, s.id, k, s.tags[k], v))
				}
			}
			for _, k := range []string{"messaging.message.id", "msgcontract.retry_count", "msgcontract.outcome"} {
				if s.tags[k] == "" {
					problems = append(problems, fmt.Sprintf("%s span %s: no %s", svc, s.id, k))
				}
			}
			outcomes[s.tags["msgcontract.outcome"]]++
			if s.tags["msgcontract.outcome"] == "retry_scheduled" && (s.tags["msgcontract.retry_delay_seconds"] == "" || s.tags["error"] != "true" || s.tags["error.type"] == "") {
				problems = append(problems, fmt.Sprintf("%s span %s: a retry without its delay or error status: %v", svc, s.id, s.tags))
			}
			if s.tags["msgcontract.outcome"] == "handled" && s.tags["msgcontract.retry_count"] != "0" {
				retried = true
			}
		}
		for _, o := range wantOutcomes {
			if outcomes[o] == 0 {
				problems = append(problems, fmt.Sprintf("%s: no process span with outcome %s (have %v)", svc, o, outcomes))
			}
		}
		if slices.Contains(wantOutcomes, "retry_scheduled") && !retried {
			problems = append(problems, svc+": no handled span with retry_count > 0 (the retry attempt)")
		}
	}
	consumer(svcPayment, paymentsvc.Group, "retry_scheduled", "handled", "deduplicated")
	consumer(svcRecon, reconGroup, "handled", "deduplicated")
	return problems
}
