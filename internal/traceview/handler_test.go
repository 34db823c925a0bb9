package traceview

import (
	"cmp"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The handler's error paths, against a stand-in for Jaeger's query API
// (the page of a trace Jaeger has is tested against a real Jaeger in
// examples/demo/trace_test.go).
func TestHandlerErrors(t *testing.T) {
	notFound, err := os.ReadFile(filepath.Join("testdata", "not-found.json"))
	if err != nil {
		t.Fatal(err)
	}
	const id = "0af7651916cd43dd8448eb211c80319c"
	jaeger := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/traces/" + id: // what Jaeger v1.75.0 answers for a trace it does not have
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write(notFound)
		case "/api/traces/00000000000000000000000000000bad":
			http.Error(w, "<h1>internal</h1>", http.StatusInternalServerError)
		case "/api/traces/0000000000000000000000000000000f": // answers once the client gave up
			<-r.Context().Done()
		default:
			http.NotFound(w, r)
		}
	}))
	defer jaeger.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens at its address any more

	for _, tc := range []struct {
		name, jaeger, path string
		status             int
		want               []string
		timeout            time.Duration // of the handler's request to Jaeger; 0: 30 s
	}{
		{"unknown trace", jaeger.URL, "/trace/" + id, http.StatusNotFound,
			[]string{"Jaeger does not know trace " + id, "reload in a few seconds", "404 trace not found", jaeger.URL + "/api/services"}, 0},
		{"Jaeger down", down.URL, "/trace/" + id, http.StatusBadGateway,
			[]string{"Jaeger did not answer", "Jaeger at " + down.URL + " cannot be reached", "run make demo TRACE=1 again", "connection refused"}, 0},
		{"Jaeger too slow", jaeger.URL, "/trace/0000000000000000000000000000000f", http.StatusGatewayTimeout,
			[]string{"did not answer within 200ms"}, 200 * time.Millisecond},
		{"Jaeger fails", jaeger.URL, "/trace/00000000000000000000000000000bad", http.StatusBadGateway,
			[]string{"Jaeger&#39;s answer is not a trace", "500 Internal Server Error", "&lt;h1&gt;internal&lt;/h1&gt;"}, 0},
		{"not an id, escaped", jaeger.URL, "/trace/%3Cscript%3Ealert(1)%3C%2Fscript%3E", http.StatusBadRequest,
			[]string{"&#34;&lt;script&gt;alert(1)&lt;/script&gt;&#34; is not a trace id"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(Handler(Config{Jaeger: tc.jaeger + "/", Timeout: cmp.Or(tc.timeout, 30*time.Second)}))
			defer srv.Close()
			resp, err := http.Get(srv.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			page := string(body)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Errorf("status %s, %s; want %d, an HTML page", resp.Status, resp.Header.Get("Content-Type"), tc.status)
			}
			for _, w := range append(tc.want, "What to do") {
				if !strings.Contains(page, w) {
					t.Errorf("the page lacks %q:\n%s", w, page)
				}
			}
			if strings.Contains(page, "<script") || strings.Contains(page, "<h1>internal") {
				t.Errorf("unescaped data on the page:\n%s", page)
			}
		})
	}
}
