package traceview

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.html from the renderer")

// orderTrace is testdata/order-trace.json: Jaeger v1.75.0's
// /api/traces/<id> answer for one order of `make demo TRACE=1` (see
// testdata/README.md): the Java order service's span, the relay's
// publishes, the Go payment-callback's attempts (the one the ledger failed
// with retry_scheduled and ERROR status, the retry, the duplicates) and
// the Python reconciliation's.
func orderTrace(t *testing.T) *Trace {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "order-trace.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func render(t *testing.T, tr *Trace) string {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, tr, Options{APIURL: "http://127.0.0.1:16686/api/traces/" + tr.TraceID}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The whole page of the recorded trace, compared with the reviewed
// golden file (go test ./internal/traceview -update rewrites it).
func TestRenderGolden(t *testing.T) {
	got := render(t, orderTrace(t))
	golden := filepath.Join("testdata", "order-trace.html")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("the page differs from %s (rerun with -update and review the diff)", golden)
	}
}

// rows splits a page into its span rows, by span id.
func rows(page string) map[string]string {
	out := map[string]string{}
	for _, chunk := range strings.Split(page, `<li id="span-`)[1:] {
		id, _, _ := strings.Cut(chunk, `"`)
		out[id] = chunk
	}
	return out
}

// spansWhere returns the ids of the spans with tag key=value.
func spansWhere(tr *Trace, key, value string) []string {
	var ids []string
	for _, s := range tr.Spans {
		for _, kv := range s.Tags {
			if kv.Key == key && kv.Text() == value {
				ids = append(ids, s.SpanID)
			}
		}
	}
	return ids
}

func spanNamed(t *testing.T, tr *Trace, op string) *Span {
	t.Helper()
	for i := range tr.Spans {
		if tr.Spans[i].OperationName == op {
			return &tr.Spans[i]
		}
	}
	t.Fatalf("no span %q in the trace", op)
	return nil
}

var depth = regexp.MustCompile(`data-depth="(\d+)"`)

func TestRender(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(t *testing.T, tr *Trace) // before rendering
		check  func(t *testing.T, tr *Trace, page string)
	}{{
		name: "the four services and their operations",
		check: func(t *testing.T, tr *Trace, page string) {
			for _, s := range []string{"order-service", "outbox-relay", "payment-callback", "reconciliation",
				"OrderService.pay", "publish order-event", "process order-event"} {
				if !strings.Contains(page, s) {
					t.Errorf("no %q on the page", s)
				}
			}
			if n := len(rows(page)); n != len(tr.Spans) {
				t.Errorf("%d rows for %d spans", n, len(tr.Spans))
			}
		},
	}, {
		name: "rows indented by parent: order, then publishes, then consumers",
		check: func(t *testing.T, tr *Trace, page string) {
			want := map[string]string{"OrderService.pay": "0", "publish order-event": "1", "process order-event": "2"}
			for _, s := range tr.Spans {
				m := depth.FindStringSubmatch(rows(page)[s.SpanID])
				if m == nil || m[1] != want[s.OperationName] {
					t.Errorf("span %s %q: depth %v, want %s", s.SpanID, s.OperationName, m, want[s.OperationName])
				}
			}
			// The root comes first and every child after its parent.
			if first := spanNamed(t, tr, "OrderService.pay").SpanID; strings.Index(page, `<li id="span-`+first) > strings.Index(page, `<li id="span-`) {
				t.Errorf("the first row is not the order's span %s", first)
			}
		},
	}, {
		name: "the failed attempt is red, with its outcome, delay and status on the row",
		check: func(t *testing.T, tr *Trace, page string) {
			ids := spansWhere(tr, "msgcontract.outcome", "retry_scheduled")
			if len(ids) == 0 {
				t.Fatal("the recorded trace has no retry_scheduled span")
			}
			for _, id := range ids {
				r := rows(page)[id]
				summary, _, _ := strings.Cut(r, "</summary>")
				for _, want := range []string{` error"`, `class="status">ERROR`, `<b>msgcontract.outcome</b>=retry_scheduled`,
					`<b>msgcontract.retry_delay_seconds</b>=`, `<b>msgcontract.retry_count</b>=0`, `<b>messaging.message.id</b>=`} {
					if !strings.Contains(summary, want) {
						t.Errorf("row %s lacks %q on its summary:\n%s", id, want, summary)
					}
				}
			}
		},
	}, {
		name: "the retry that handled it shows its retry count, not red",
		check: func(t *testing.T, tr *Trace, page string) {
			retried := 0
			for _, id := range spansWhere(tr, "msgcontract.outcome", "handled") {
				r := rows(page)[id]
				if strings.Contains(r, `<b>msgcontract.retry_count</b>=1`) {
					retried++
				}
				if strings.Contains(r, ` error"`) {
					t.Errorf("handled span %s is drawn as an error", id)
				}
			}
			if retried == 0 {
				t.Error("no handled row with msgcontract.retry_count=1")
			}
		},
	}, {
		name: "a consumer's link to the publish it came from",
		check: func(t *testing.T, tr *Trace, page string) {
			for _, s := range tr.Spans {
				if s.OperationName != "process order-event" {
					continue
				}
				want := `<a class="link" href="#span-` + s.References[0].SpanID + `">↪ link from outbox-relay: publish order-event (its parent)</a>`
				if !strings.Contains(rows(page)[s.SpanID], want) {
					t.Errorf("row %s lacks %s", s.SpanID, want)
				}
			}
		},
	}, {
		name: "a link to another trace leads to that trace's page",
		mutate: func(t *testing.T, tr *Trace) {
			s := spanNamed(t, tr, "process order-event")
			s.References = append(s.References, Reference{RefType: "FOLLOWS_FROM", TraceID: "00000000000000000000000000000abc", SpanID: "0000000000000def"})
		},
		check: func(t *testing.T, tr *Trace, page string) {
			r := rows(page)[spanNamed(t, tr, "process order-event").SpanID]
			if !strings.Contains(r, `<a class="link" href="00000000000000000000000000000abc">↪ link to trace 00000000000000000000000000000abc, span 0000000000000def</a>`) {
				t.Errorf("no link to the other trace:\n%s", r)
			}
		},
	}, {
		name: "span names, tags, services and warnings are data, escaped",
		mutate: func(t *testing.T, tr *Trace) {
			s := spanNamed(t, tr, "OrderService.pay")
			s.OperationName = `<script>alert("op")</script>`
			s.Tags = append(s.Tags, KeyValue{Key: "msgcontract.biz_key", Value: `"><img src=x onerror=alert(1)>`})
			s.Warnings = []string{"<iframe src=//evil>"}
			p := tr.Processes[s.ProcessID]
			p.ServiceName = "<b>order-service</b>"
			tr.Processes[s.ProcessID] = p
			tr.Warnings = []string{"<style>body{display:none}</style>"}
		},
		check: func(t *testing.T, tr *Trace, page string) {
			for _, bad := range []string{"<script", "<img", "<iframe", "<b>order-service", "<style>body"} {
				if strings.Contains(page, bad) {
					t.Errorf("the page carries %q unescaped", bad)
				}
			}
			for _, want := range []string{`&lt;script&gt;alert(&#34;op&#34;)&lt;/script&gt;`, `&#34;&gt;&lt;img src=x onerror=alert(1)&gt;`, `&lt;b&gt;order-service&lt;/b&gt;`} {
				if !strings.Contains(page, want) {
					t.Errorf("the page lacks the escaped %q", want)
				}
			}
		},
	}, {
		name: "a span whose parent has not arrived is drawn as a root, with a note",
		mutate: func(t *testing.T, tr *Trace) {
			root := spanNamed(t, tr, "OrderService.pay").SpanID
			var spans []Span
			for _, s := range tr.Spans {
				if s.SpanID != root {
					spans = append(spans, s)
				}
			}
			tr.Spans = spans
		},
		check: func(t *testing.T, tr *Trace, page string) {
			r := rows(page)[spanNamed(t, tr, "publish order-event").SpanID]
			if !strings.Contains(r, `data-depth="0"`) || !strings.Contains(r, "is not in this trace (yet)") {
				t.Errorf("orphan row:\n%s", r)
			}
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			tr := orderTrace(t)
			if tc.mutate != nil {
				tc.mutate(t, tr)
			}
			tc.check(t, tr, render(t, tr))
		})
	}
}

func TestDecodeNotFound(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "not-found.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(bytes.NewReader(b)); !errors.Is(err, ErrNotFound) {
		t.Errorf("Jaeger's answer for an unknown trace: %v, want ErrNotFound", err)
	}
	if _, err := Decode(strings.NewReader("<html>")); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("an HTML answer: %v, want a decoding error", err)
	}
}
