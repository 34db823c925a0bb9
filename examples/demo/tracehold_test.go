package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The -hold-trace server's root leads to the run's trace page, and other
// paths are still not found.
func TestTraceHoldRedirectsRootToTheTrace(t *testing.T) {
	h := traceHold(&Result{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", JaegerUI: "http://127.0.0.1:1"})
	for _, tc := range []struct {
		path     string
		status   int
		location string
	}{
		{"/", http.StatusFound, "/trace/4bf92f3577b34da6a3ce929d0e0e4736"},
		{"/nothing", http.StatusNotFound, ""},
		{"/trace/not-hex", http.StatusBadRequest, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.status || rec.Header().Get("Location") != tc.location {
			t.Errorf("GET %s: %d Location %q, want %d %q", tc.path, rec.Code, rec.Header().Get("Location"), tc.status, tc.location)
		}
	}
}
