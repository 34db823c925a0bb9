package main

import (
	"strings"
	"testing"
)

// The demo's closing trace line: how to turn tracing on, or where the
// order's trace is.
func TestTraceLine(t *testing.T) {
	if l := (&Result{}).TraceLine(); !strings.Contains(l, "make demo TRACE=1") || !strings.Contains(l, otlpEnv) {
		t.Errorf("without tracing: %q", l)
	}
	r := &Result{TraceOrder: "20250101_0001", TraceID: "0af7651916cd43dd8448eb211c80319c", JaegerUI: "http://127.0.0.1:16686"}
	if l := r.TraceLine(); !strings.Contains(l, "http://127.0.0.1:16686/trace/0af7651916cd43dd8448eb211c80319c") ||
		!strings.Contains(l, "/api/traces/0af7651916cd43dd8448eb211c80319c") || !strings.Contains(l, "order 20250101_0001") {
		t.Errorf("with Jaeger: %q", l)
	}
	r.TraceView = "http://127.0.0.1:40001"
	if l := r.TraceLine(); !strings.Contains(l, "http://127.0.0.1:40001/trace/0af7651916cd43dd8448eb211c80319c") ||
		!strings.Contains(l, "(API: http://127.0.0.1:16686/api/traces/0af7651916cd43dd8448eb211c80319c)") {
		t.Errorf("with the demo's trace view: %q", l)
	}
	r.TraceView, r.JaegerUI = "", ""
	if l := r.TraceLine(); !strings.Contains(l, "trace 0af7651916cd43dd8448eb211c80319c") {
		t.Errorf("with a collector of one's own: %q", l)
	}
}
