package consumer

import (
	"strings"
	"testing"
)

func TestLogLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 100) // 200 bytes
	tests := []struct{ in, want string }{
		{"code 40901: illegal transition", "code 40901: illegal transition"},
		{"proto: cannot parse\n00000000  0a 02 6d 31", "proto: cannot parse…"},
		{long, strings.Repeat("é", 80) + "…"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := logLine(tt.in); got != tt.want {
			t.Errorf("logLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Log lines carry trace_id and span_id, the field names every runtime
// uses, taken from the envelope's W3C traceparent.
func TestTraceIDs(t *testing.T) {
	t.Parallel()
	traceID, spanID, ok := traceIDs("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if !ok || traceID != "4bf92f3577b34da6a3ce929d0e0e4736" || spanID != "00f067aa0ba902b7" {
		t.Errorf("traceIDs = %q %q %v", traceID, spanID, ok)
	}
	for _, bad := range []string{"", "00-4bf92f3577b34da6a3ce929d0e0e4736", "not a traceparent at all, but long enough to be sliced...."} {
		if _, _, ok := traceIDs(bad); ok {
			t.Errorf("traceIDs(%q) accepted", bad)
		}
	}
}
