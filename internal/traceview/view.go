package traceview

import (
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/tracing"
)

//go:embed page.html
var pageFS embed.FS

var page = template.Must(template.New("page.html").ParseFS(pageFS, "page.html"))

// Options are what a page shows beside the trace.
type Options struct {
	// APIURL is where the trace's JSON is (Jaeger's /api/traces/<id>); empty: no link.
	APIURL string
}

// keyAttrs are shown first on a row, in this order; every other
// messaging.* and msgcontract.* tag follows.
var keyAttrs = []string{
	string(tracing.KeyOutcome), string(tracing.KeyRetryCount), string(tracing.KeyRetryDelay),
	string(tracing.KeyDeadLetter), string(tracing.KeyEventType), string(tracing.KeyBizKey),
}

// palette is how many service colours page.html defines (.svc0 ...).
const palette = 8

// view is what page.html draws.
type view struct {
	Title    string
	TraceID  string
	Start    string
	Duration string
	Services []service
	Rows     []row
	Errors   int
	Warnings []string
	APIURL   string
	Ticks    []tick
	Failure  *failure
}

type service struct {
	Name  string
	Class string
	Spans int
}

type tick struct {
	Left  string
	Label string
}

// row is one span of the waterfall.
type row struct {
	ID, Service, Class, Op, Kind string
	Depth                        int
	Indent                       string // CSS length
	Left, Width                  string // percent of the trace's duration
	DurAt                        string // where the duration label goes
	DurBefore                    bool   // label left of the bar (it ends near the right edge)
	Offset, Duration             string
	Error                        bool
	Status                       string
	Key                          []attr // on the row
	Tags                         []attr // every tag, in the details
	Process                      []attr
	Links                        []link
	Events                       []event
	Note                         string
	Warnings                     []string
}

type attr struct{ Key, Value string }

// link is a span link (a FOLLOWS_FROM reference, or any reference to
// another trace). Href is "#span-<id>" in this trace, or "<trace id>",
// relative to /trace/, for another trace.
type link struct {
	Href, Text string
	Parent     bool
}

type event struct {
	Offset string
	Name   string
	Fields []attr
}

// Render writes t as one HTML page.
func Render(w io.Writer, t *Trace, opt Options) error {
	return page.Execute(w, build(t, opt))
}

func build(t *Trace, opt Options) view {
	byID := map[string]*Span{}
	for i := range t.Spans {
		byID[t.Spans[i].SpanID] = &t.Spans[i]
	}
	start, end := t.Spans[0].StartTime, t.Spans[0].StartTime+t.Spans[0].Duration
	for _, s := range t.Spans {
		start, end = min(start, s.StartTime), max(end, s.StartTime+s.Duration)
	}
	total := max(end-start, 1)

	// Services in name order get the colours; spans count per service.
	counts := map[string]int{}
	for _, s := range t.Spans {
		counts[serviceOf(t, s)]++
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	slices.Sort(names)
	class := map[string]string{}
	v := view{TraceID: t.TraceID, APIURL: opt.APIURL, Warnings: t.Warnings,
		Start: time.UnixMicro(start).UTC().Format("2006-01-02 15:04:05.000 UTC"), Duration: micros(total)}
	for i, n := range names {
		class[n] = fmt.Sprintf("svc%d", i%palette)
		v.Services = append(v.Services, service{Name: n, Class: class[n], Spans: counts[n]})
	}
	for i := 0; i <= 4; i++ {
		v.Ticks = append(v.Ticks, tick{Left: pct(float64(i) * 25), Label: micros(total * int64(i) / 4)})
	}

	// The tree: a span's parent is its CHILD_OF reference in this trace,
	// else its first FOLLOWS_FROM one (a consumer span's link to the
	// producer). A parent missing from the trace makes the span a root.
	children := map[string][]*Span{}
	var roots []*Span
	for i := range t.Spans {
		s := &t.Spans[i]
		if p := parentOf(s, byID); p != "" {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	order := func(a, b *Span) int {
		return cmp.Or(cmp.Compare(a.StartTime, b.StartTime), cmp.Compare(a.SpanID, b.SpanID))
	}
	seen := map[string]bool{}
	var walk func(s *Span, depth int)
	walk = func(s *Span, depth int) {
		if seen[s.SpanID] {
			return // a reference cycle: draw each span once
		}
		seen[s.SpanID] = true
		r := newRow(t, s, byID, start, total, depth)
		r.Class = class[r.Service]
		if r.Error {
			v.Errors++
		}
		v.Rows = append(v.Rows, r)
		kids := children[s.SpanID]
		slices.SortFunc(kids, order)
		for _, c := range kids {
			walk(c, depth+1)
		}
	}
	slices.SortFunc(roots, order)
	for _, s := range roots {
		walk(s, 0)
	}
	// Spans only reachable through a cycle are drawn as roots.
	for i := range t.Spans {
		walk(&t.Spans[i], 0)
	}
	if len(v.Rows) > 0 {
		v.Title = v.Rows[0].Service + ": " + v.Rows[0].Op
	}
	return v
}

func serviceOf(t *Trace, s Span) string {
	if p, ok := t.Processes[s.ProcessID]; ok && p.ServiceName != "" {
		return p.ServiceName
	}
	return "(unknown service " + s.ProcessID + ")"
}

func parentOf(s *Span, byID map[string]*Span) string {
	parent := ""
	for _, r := range s.References {
		if r.TraceID != s.TraceID || r.SpanID == s.SpanID || byID[r.SpanID] == nil {
			continue
		}
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
		if parent == "" {
			parent = r.SpanID
		}
	}
	return parent
}

func newRow(t *Trace, s *Span, byID map[string]*Span, start, total int64, depth int) row {
	r := row{ID: s.SpanID, Service: serviceOf(t, *s), Op: s.OperationName, Depth: depth,
		Indent: fmt.Sprintf("%.1fem", float64(min(depth, 12))*1.1),
		Left:   pct(float64(s.StartTime-start) * 100 / float64(total)),
		Width:  pct(max(float64(s.Duration)*100/float64(total), 0.3)),
		Offset: micros(s.StartTime - start), Duration: micros(s.Duration), Warnings: s.Warnings}
	left := float64(s.StartTime-start) * 100 / float64(total)
	if right := left + float64(s.Duration)*100/float64(total); right > 75 {
		r.DurBefore, r.DurAt = true, pct(100-left)
	} else {
		r.DurAt = pct(right)
	}
	var key, rest []attr
	for _, kv := range s.Tags {
		a := attr{kv.Key, kv.Text()}
		r.Tags = append(r.Tags, a)
		switch {
		case kv.Key == "span.kind":
			r.Kind = a.Value
		case kv.Key == "error" && a.Value == "true", kv.Key == "otel.status_code" && a.Value == "ERROR":
			r.Error = true
		case kv.Key == "otel.status_description":
			r.Status = a.Value
		case slices.Contains(keyAttrs, kv.Key):
			key = append(key, a)
		case strings.HasPrefix(kv.Key, "messaging.") || strings.HasPrefix(kv.Key, "msgcontract."):
			rest = append(rest, a)
		}
	}
	slices.SortStableFunc(key, func(a, b attr) int {
		return cmp.Compare(slices.Index(keyAttrs, a.Key), slices.Index(keyAttrs, b.Key))
	})
	slices.SortStableFunc(rest, func(a, b attr) int { return cmp.Compare(a.Key, b.Key) })
	r.Key = append(key, rest...)
	if p, ok := t.Processes[s.ProcessID]; ok {
		for _, kv := range p.Tags {
			r.Process = append(r.Process, attr{kv.Key, kv.Text()})
		}
	}
	parent := parentOf(s, byID)
	for _, ref := range s.References {
		switch {
		case ref.TraceID != "" && ref.TraceID != s.TraceID:
			r.Links = append(r.Links, link{Href: ref.TraceID,
				Text: fmt.Sprintf("link to trace %s, span %s", ref.TraceID, ref.SpanID)})
		case byID[ref.SpanID] == nil:
			r.Note = fmt.Sprintf("%s span %s is not in this trace (yet)", strings.ToLower(ref.RefType), ref.SpanID)
		case ref.RefType != "CHILD_OF":
			to := byID[ref.SpanID]
			r.Links = append(r.Links, link{Href: "#span-" + ref.SpanID, Parent: ref.SpanID == parent,
				Text: fmt.Sprintf("link from %s: %s", serviceOf(t, *to), to.OperationName)})
		}
	}
	for _, l := range s.Logs {
		e := event{Offset: micros(l.Timestamp - start)}
		for _, f := range l.Fields {
			if f.Key == "event" {
				e.Name = f.Text()
			} else {
				e.Fields = append(e.Fields, attr{f.Key, f.Text()})
			}
		}
		r.Events = append(r.Events, e)
	}
	return r
}

// pct is a CSS percentage.
func pct(p float64) string { return fmt.Sprintf("%.3f%%", min(max(p, 0), 100)) }

// micros reads a duration in microseconds: 840µs, 12.35ms, 2.50s.
func micros(us int64) string {
	switch {
	case us < 1000:
		return fmt.Sprintf("%dµs", us)
	case us < 1_000_000:
		return fmt.Sprintf("%.2fms", float64(us)/1e3)
	}
	return fmt.Sprintf("%.2fs", float64(us)/1e6)
}
