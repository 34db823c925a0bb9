package main

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgcontract/msgcontract/examples/go-consumer/paymentsvc"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
)

// Result is what the databases say after the run.
type Result struct {
	Orders, Published, UniqueKeys int
	// PaidOnce counts orders with exactly one payment effect.
	PaidOnce int
	// Duplicates counts business effects beyond the first per event, in
	// both consumers.
	Duplicates int
	// Lost counts (unique key, consumer) pairs handled by neither the
	// consumer nor its dead-letter queue.
	Lost int
	// DeadLettered is the Go service's dead-letter count; Expected... are
	// the poison message and the illegal refund the demo injected.
	DeadLettered, PyDeadLettered int
	DeadLetterReasons            string
	Reconciled, RegistryRejected bool
	Mismatches                   []string
	LedgerCalls, LedgerFailures  int
	Go, Py                       serviceStats
	// Framing counts, on Kafka only, the event topic's records by the
	// schema id of their Confluent frame (-1: not framed).
	Framing map[int32]int
	// DLQ is, on Kafka and RabbitMQ, the dead-letter store's dlqopen
	// address (kafka://brokers?namespace=NS, amqp://…/?prefix=P), for the
	// console after the run.
	DLQ     string
	Elapsed time.Duration
	// TraceOrder and TraceID, when tracing was on: the order whose
	// payment the ledger failed first, and the trace its PaySuccess
	// carries; JaegerUI is the Jaeger that has it, TraceView (set after
	// the run) the demo's own page server drawing it (internal/traceview).
	TraceOrder, TraceID, JaegerUI, TraceView string
}

// TraceLine says where to see one order's trace, or, without tracing, how
// to turn it on.
func (r *Result) TraceLine() string {
	switch {
	case r.TraceID == "":
		return "trace: make demo TRACE=1 runs Jaeger and prints where to see one order's trace" +
			" (or -otlp http://host:4318 / $" + otlpEnv + " for a collector of your own)"
	case r.JaegerUI == "":
		return fmt.Sprintf("trace: order %s (Java producer -> relay -> Go consumer with its retries -> Python consumer) is trace %s", r.TraceOrder, r.TraceID)
	}
	view := r.JaegerUI
	if r.TraceView != "" {
		view = r.TraceView
	}
	return fmt.Sprintf("trace: order %s (Java producer -> relay -> Go consumer with its retries -> Python consumer): %s/trace/%s (API: %s/api/traces/%s)",
		r.TraceOrder, view, r.TraceID, r.JaegerUI, r.TraceID)
}

type serviceStats struct{ processed, deduped, retried, deadLettered int }

// expectedDeadLetters: the poison message and the unrequested refund.
const expectedDeadLetters = 2

// OK reports whether every invariant held. It reads only what the
// databases and the ledger (the downstream the services call) recorded:
// every order paid exactly once although the ledger failed some calls
// proves those payments were retried. The services' own counters (Go,
// Py) are shown in the table, never judged.
func (r *Result) OK() bool {
	return r.Orders > 0 && r.PaidOnce == r.Orders && r.Duplicates == 0 && r.Lost == 0 &&
		r.DeadLettered == expectedDeadLetters && r.PyDeadLettered == expectedDeadLetters &&
		r.Reconciled && r.RegistryRejected && r.LedgerFailures > 0 && r.framingOK()
}

// framingOK reports, on Kafka, whether every published event went out
// framed with one schema id (the relay publishes at least once) and only
// the poison message without a frame.
func (r *Result) framingOK() bool {
	if r.Framing == nil {
		return true
	}
	framed := 0
	for id, n := range r.Framing {
		if id >= 0 {
			framed += n
		}
	}
	return r.Framing[-1] == 1 && len(r.Framing) == 2 && framed >= r.Published
}

// Line is the closing line scripts read.
func (r *Result) Line() string {
	status := "ok"
	if !r.OK() {
		status = "FAILED"
	}
	line := fmt.Sprintf("demo: %s orders=%d paid_once=%d duplicates=%d lost=%d dead_lettered=%d reconciled=%t",
		status, r.Orders, r.PaidOnce, r.Duplicates, r.Lost, r.DeadLettered, r.Reconciled)
	if !r.OK() {
		var why []string
		if r.DeadLettered != expectedDeadLetters || r.PyDeadLettered != expectedDeadLetters {
			why = append(why, fmt.Sprintf("want %d dead letters per service (poison + illegal refund), got go=%d python=%d",
				expectedDeadLetters, r.DeadLettered, r.PyDeadLettered))
		}
		if !r.RegistryRejected {
			why = append(why, "the registry accepted a changed biz_key")
		}
		if !r.framingOK() {
			why = append(why, fmt.Sprintf("want the %d published events framed with one schema id and only the poison message unframed, got %s",
				r.Published, r.framingText()))
		}
		if r.LedgerFailures == 0 {
			why = append(why, "the ledger never failed, so the outage and its retries were not exercised")
		}
		why = append(why, r.Mismatches...)
		if len(why) > 0 {
			line += " (" + strings.Join(why, "; ") + ")"
		}
	}
	return line
}

// Print writes the per-service table.
func (r *Result) Print(out io.Writer) {
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "service\tpublished\tprocessed\tdeduped\tretried\tdead-lettered\t")
	fmt.Fprintf(tw, "java order service\t%d\t-\t-\t-\t-\t\n", r.Published)
	fmt.Fprintf(tw, "go payment-callback\t-\t%d\t%d\t%d\t%d\t\n", r.Go.processed, r.Go.deduped, r.Go.retried, r.Go.deadLettered)
	fmt.Fprintf(tw, "python reconciliation\t-\t%d\t%d\t%d\t%d\t\n", r.Py.processed, r.Py.deduped, r.Py.retried, r.Py.deadLettered)
	tw.Flush()
	fmt.Fprintf(out, "\n%d unique events under %d publishes; ledger: %d calls, %d answered 503 and were retried; dead letters: %s; %.1fs\n",
		r.UniqueKeys, r.Published, r.LedgerCalls, r.LedgerFailures, r.DeadLetterReasons, r.Elapsed.Seconds())
	if r.Framing != nil {
		fmt.Fprintf(out, "kafka: records on %s by Confluent frame: %s\n", topic, r.framingText())
	}
}

// framingText is Framing as "schema id 1 ×38, not framed ×1".
func (r *Result) framingText() string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(r.Framing)) {
		if id < 0 {
			parts = append(parts, fmt.Sprintf("not framed ×%d", r.Framing[id]))
		} else {
			parts = append(parts, fmt.Sprintf("schema id %d ×%d", id, r.Framing[id]))
		}
	}
	return strings.Join(parts, ", ")
}

func count(ctx context.Context, db *sql.DB, query string, args ...any) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}

// summarize computes the result from the databases: the order service's
// (orders, outbox), the payment service's, the reconciliation service's
// and the transport's dead letters (the queue's table, or the JetStream
// dead-letter stream). Only the table's processed/deduped/retried columns
// come from the services' own counters.
func summarize(ctx context.Context, ordersDB, paymentDB *sql.DB, reconPath string, tr demoTransport, reg *prometheus.Registry) (*Result, error) {
	reconDB, err := sqlitedb.Open(reconPath)
	if err != nil {
		return nil, err
	}
	defer reconDB.Close()
	dead := map[string][]dlq.Record{}
	for _, g := range groups {
		if dead[g], err = tr.deadLetters(ctx, g); err != nil {
			return nil, fmt.Errorf("dead letters of %s: %w", g, err)
		}
	}
	r := &Result{DeadLettered: len(dead[paymentsvc.Group]), PyDeadLettered: len(dead[reconGroup])}
	for _, q := range []struct {
		dst *int
		db  *sql.DB
		sql string
	}{
		{&r.Orders, ordersDB, `SELECT COUNT(*) FROM orders`},
		{&r.Published, ordersDB, `SELECT COUNT(*) FROM msg_outbox`},
		{&r.UniqueKeys, ordersDB, `SELECT COUNT(DISTINCT biz_key) FROM msg_outbox`},
		{&r.PaidOnce, paymentDB, `SELECT COUNT(*) FROM (SELECT order_id FROM payment_effects WHERE kind = 'PAY' GROUP BY order_id HAVING COUNT(*) = 1)`},
	} {
		if *q.dst, err = count(ctx, q.db, q.sql); err != nil {
			return nil, err
		}
	}
	for _, db := range []struct {
		db    *sql.DB
		table string
	}{{paymentDB, "payment_effects"}, {reconDB, "recon_effects"}} {
		n, err := count(ctx, db.db, `SELECT COALESCE(SUM(c - 1), 0) FROM (SELECT COUNT(*) AS c FROM `+db.table+` GROUP BY order_id, kind, ref)`)
		if err != nil {
			return nil, err
		}
		r.Duplicates += n
	}
	if r.Lost, err = lost(ctx, ordersDB, paymentDB, reconDB, dead); err != nil {
		return nil, err
	}
	if err := reconcile(ctx, r, paymentDB, reconDB); err != nil {
		return nil, err
	}
	r.DeadLetterReasons = deadLetterReasons(dead)
	r.Go = serviceStats{
		processed: sumCounter(reg, metrics.OutcomeHandled),
		deduped:   sumCounter(reg, metrics.OutcomeDeduplicated) + sumCounter(reg, metrics.OutcomeConflict),
		retried:   sumCounter(reg, metrics.OutcomeRetryScheduled), deadLettered: r.DeadLettered,
	}
	stats := map[string]*int{"processed": &r.Py.processed, "deduped": &r.Py.deduped, "retried": &r.Py.retried}
	for name, dst := range stats {
		if err := reconDB.QueryRowContext(ctx, `SELECT COALESCE(MAX(value), 0) FROM recon_stats WHERE name = ?1`, name).Scan(dst); err != nil {
			return nil, err
		}
	}
	r.Py.deadLettered = r.PyDeadLettered
	return r, nil
}

// deadLetterReasons counts dead letters by group, reason and code, in
// group then code order: "payment-callback decode code -3 ×1, ...".
func deadLetterReasons(dead map[string][]dlq.Record) string {
	type key struct {
		group  string
		reason dlq.Reason
		code   int32
	}
	n := map[key]int{}
	for g, recs := range dead {
		for _, rec := range recs {
			n[key{g, rec.Reason, rec.Code}]++
		}
	}
	keys := slices.SortedFunc(maps.Keys(n), func(a, b key) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.code, b.code), cmp.Compare(a.reason, b.reason))
	})
	var reasons []string
	for _, k := range keys {
		reasons = append(reasons, fmt.Sprintf("%s %s code %d ×%d", k.group, k.reason, k.code, n[k]))
	}
	return strings.Join(reasons, ", ")
}

// lost counts, per consumer, the unique keys the producer published that
// the consumer neither claimed (msg_dedup) nor dead-lettered.
func lost(ctx context.Context, ordersDB, paymentDB, reconDB *sql.DB, dead map[string][]dlq.Record) (int, error) {
	keys, err := column(ctx, ordersDB, `SELECT DISTINCT biz_key FROM msg_outbox`)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, c := range []struct {
		db    *sql.DB
		group string
	}{{paymentDB, paymentsvc.Group}, {reconDB, reconGroup}} {
		handled := map[string]bool{}
		claimed, err := column(ctx, c.db, `SELECT biz_key FROM msg_dedup`)
		if err != nil {
			return 0, err
		}
		for _, k := range claimed {
			handled[k] = true
		}
		for _, rec := range dead[c.group] {
			handled[rec.BizKey] = true
		}
		for _, k := range keys {
			if !handled[k] {
				total++
			}
		}
	}
	return total, nil
}

// reconcile compares every order's state and sums between the two
// consumers.
func reconcile(ctx context.Context, r *Result, paymentDB, reconDB *sql.DB) error {
	type order struct {
		state          string
		paid, refunded int64
	}
	read := func(db *sql.DB, table string) (map[string]order, error) {
		rows, err := db.QueryContext(ctx, `SELECT order_id, state, paid, refunded FROM `+table)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		m := map[string]order{}
		for rows.Next() {
			var id string
			var o order
			if err := rows.Scan(&id, &o.state, &o.paid, &o.refunded); err != nil {
				return nil, err
			}
			m[id] = o
		}
		return m, rows.Err()
	}
	goSide, err := read(paymentDB, "orders")
	if err != nil {
		return err
	}
	pySide, err := read(reconDB, "recon_orders")
	if err != nil {
		return err
	}
	for id, g := range goSide {
		if p, ok := pySide[id]; !ok || p != g {
			r.Mismatches = append(r.Mismatches, fmt.Sprintf("order %s: go %+v, python %+v", id, g, pySide[id]))
		}
	}
	if len(pySide) != len(goSide) {
		r.Mismatches = append(r.Mismatches, fmt.Sprintf("go knows %d orders, python %d", len(goSide), len(pySide)))
	}
	r.Reconciled = len(r.Mismatches) == 0 && len(goSide) > 0
	return nil
}

func column(ctx context.Context, db *sql.DB, query string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// sumCounter sums msgcontract_messages_processed_total over the series of
// one outcome.
func sumCounter(reg *prometheus.Registry, outcome string) int {
	families, err := reg.Gather()
	if err != nil {
		return -1
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != metrics.NameProcessed {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == metrics.LabelOutcome && l.GetValue() == outcome {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return int(total)
}
