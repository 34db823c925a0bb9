// Package traceview shows one trace from Jaeger's HTTP query API
// (/api/traces/<id>) as a self-contained HTML page: a waterfall with one
// row per span, indented under its parent, the bar placed by start and
// duration, the service and operation, errors in red, the span's messaging.*
// and msgcontract.* attributes on the row, and span links as links.
//
// It exists because a Jaeger built from its Go module (scripts/install-jaeger.sh)
// serves the API but no UI assets. Render draws a decoded answer; Handler
// fetches /trace/<id> from a Jaeger base URL and draws it, or explains what
// failed. The page has no script and loads nothing: every span name and
// tag is data, escaped by html/template.
package traceview

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Answer is Jaeger's /api/traces/<id> answer: the traces found, or the
// errors (a trace Jaeger does not know is {"data":null, "errors":[{"code":404,...}]}).
type Answer struct {
	Data   []Trace     `json:"data"`
	Errors []HTTPError `json:"errors"`
}

// HTTPError is one entry of an answer's errors.
type HTTPError struct {
	Code int    `json:"code"`
	Msg  string `json:"msg"`
}

// Trace is one trace in Jaeger's JSON model.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
	Warnings  []string           `json:"warnings"`
}

// Span is one span; StartTime is in microseconds since the epoch and
// Duration in microseconds.
type Span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []Reference `json:"references"`
	StartTime     int64       `json:"startTime"`
	Duration      int64       `json:"duration"`
	Tags          []KeyValue  `json:"tags"`
	Logs          []Log       `json:"logs"`
	ProcessID     string      `json:"processID"`
	Warnings      []string    `json:"warnings"`
}

// Reference ties a span to another: CHILD_OF is its parent; FOLLOWS_FROM
// is how Jaeger shows an OpenTelemetry span link (a link to the parent
// itself is kept as that one FOLLOWS_FROM reference).
type Reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// KeyValue is a tag; Value is a string, bool or json.Number.
type KeyValue struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Text is the tag's value as it reads.
func (kv KeyValue) Text() string { return fmt.Sprint(kv.Value) }

// Log is a span event.
type Log struct {
	Timestamp int64      `json:"timestamp"`
	Fields    []KeyValue `json:"fields"`
}

// Process is the resource a span came from.
type Process struct {
	ServiceName string     `json:"serviceName"`
	Tags        []KeyValue `json:"tags"`
}

// ErrNotFound: Jaeger answered that it has no such trace.
var ErrNotFound = errors.New("jaeger has no such trace")

// Decode reads an /api/traces/<id> answer and returns its trace. An answer
// without a trace is ErrNotFound (wrapped with Jaeger's message).
func Decode(r io.Reader) (*Trace, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber() // 64-bit tags stay exact
	var a Answer
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("not a Jaeger trace answer: %w", err)
	}
	if len(a.Data) == 0 {
		var msgs []string
		for _, e := range a.Errors {
			msgs = append(msgs, fmt.Sprintf("%d %s", e.Code, e.Msg))
		}
		if len(msgs) == 0 {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("%w (%s)", ErrNotFound, strings.Join(msgs, "; "))
	}
	t := a.Data[0]
	if len(t.Spans) == 0 {
		return nil, fmt.Errorf("%w (trace %s has no spans)", ErrNotFound, t.TraceID)
	}
	return &t, nil
}
