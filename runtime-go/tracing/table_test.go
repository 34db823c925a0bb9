package tracing_test

import (
	"bufio"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/msgcontract/msgcontract/runtime-go/tracing"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// tableRow is one row of testdata/otel/messaging-spans.tsv.
type tableRow struct {
	span, name, kind string
	languages        []string
	transport, level string
	attrs            []string // key or key=a|b
}

func readTable(t *testing.T) []tableRow {
	t.Helper()
	f, err := os.Open("../../testdata/otel/messaging-spans.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []tableRow
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c := strings.Split(line, "\t")
		if len(c) != 7 {
			t.Fatalf("table row %q: %d columns, want 7", line, len(c))
		}
		rows = append(rows, tableRow{span: c[0], name: c[1], kind: c[2], languages: strings.Split(c[3], ","),
			transport: c[4], level: c[5], attrs: strings.Split(c[6], ",")})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// known says which recommended attributes the test's runtime knows: the
// broker's address, a Kafka record's place.
type known struct{ server, kafka bool }

// checkTable checks every span of the runtime's scope in spans against
// the table rows for Go and system: its name and kind, every required
// attribute (and pinned value), every recommended one the runtime knows,
// error.type exactly when the status is ERROR, and nothing unlisted. Each
// span the table lists for Go must have been seen.
func checkTable(t *testing.T, table []tableRow, spans []sdktrace.ReadOnlySpan, system string, k known) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range spans {
		if s.InstrumentationScope().Name != tracing.ScopeName {
			continue
		}
		attrs := map[string]attribute.Value{}
		for _, a := range s.Attributes() {
			attrs[string(a.Key)] = a.Value
		}
		op := attrs["messaging.operation.type"].AsString()
		seen[op] = true
		var rows []tableRow
		for _, r := range table {
			if r.span == op && slices.Contains(r.languages, "go") && (r.transport == "*" || r.transport == system) {
				rows = append(rows, r)
			}
		}
		if len(rows) == 0 {
			t.Errorf("span %q (operation type %q): not in the table", s.Name(), op)
			continue
		}
		want := strings.ReplaceAll(rows[0].name, "{messaging.operation.name}", attrs["messaging.operation.name"].AsString())
		if d, ok := attrs["messaging.destination.name"]; ok {
			want = strings.ReplaceAll(want, "{destination}", d.AsString())
		} else {
			want = strings.TrimSuffix(want, " {destination}")
		}
		if s.Name() != want {
			t.Errorf("span %q: name, want %q", s.Name(), want)
		}
		if got := strings.ToUpper(s.SpanKind().String()); got != rows[0].kind {
			t.Errorf("span %q: kind %s, want %s", s.Name(), got, rows[0].kind)
		}
		listed := map[string]bool{}
		for _, r := range rows {
			for _, a := range r.attrs {
				key, values, pinned := strings.Cut(a, "=")
				listed[key] = true
				v, has := attrs[key]
				switch {
				case r.level == "required" && !has,
					r.level == "recommended" && !has && (k.kafka && r.transport == "kafka" || k.server && r.transport == "*"):
					t.Errorf("span %q: %s attribute %s missing", s.Name(), r.level, key)
				case r.level == "on_error" && has != (s.Status().Code == codes.Error):
					t.Errorf("span %q: %s = %v with status %v, want it exactly on ERROR", s.Name(), key, v.Emit(), s.Status())
				}
				if pinned && has && !slices.Contains(strings.Split(values, "|"), v.Emit()) {
					t.Errorf("span %q: %s = %q, want one of %q", s.Name(), key, v.Emit(), values)
				}
			}
		}
		for key := range attrs {
			if !listed[key] {
				t.Errorf("span %q: attribute %s is not in the table", s.Name(), key)
			}
		}
		if attrs["messaging.system"].AsString() != system {
			t.Errorf("span %q: messaging.system %q, want %q", s.Name(), attrs["messaging.system"].AsString(), system)
		}
	}
	for _, r := range table {
		if slices.Contains(r.languages, "go") && !seen[r.span] {
			t.Errorf("no %s span seen; the table lists one for Go", r.span)
		}
	}
}

// settled reports whether spans hold both consumer spans and the ack of
// the handled attempt.
func settled(spans []sdktrace.ReadOnlySpan) bool {
	process, acks := 0, 0
	for _, s := range spans {
		switch {
		case strings.HasPrefix(s.Name(), "process "):
			process++
		case strings.HasPrefix(s.Name(), "ack "):
			acks++
		}
	}
	return process == 2 && acks >= 1
}

// located dresses a transport as a partitioned log: its deliveries carry
// partition 3 and offsets from 40, as a Kafka record would.
type located struct{ transport.Subscriber }

func (l located) Subscribe(ctx context.Context, group string, topics []string) (transport.Subscription, error) {
	sub, err := l.Subscriber.Subscribe(ctx, group, topics)
	return &locatedSub{Subscription: sub}, err
}

type locatedSub struct {
	transport.Subscription
	next int64
}

func (s *locatedSub) Fetch(ctx context.Context, max int) ([]*transport.Delivery, error) {
	ds, err := s.Subscription.Fetch(ctx, max)
	for _, d := range ds {
		d.Partition, d.Offset = 3, 40+s.next
		s.next++
	}
	return ds, err
}
