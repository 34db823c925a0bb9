package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ledger collects what the writers were told: every acknowledgement, and
// the counts of the answers that were not one.
type ledger struct {
	mu   sync.Mutex
	acks []Ack

	// acked counts acknowledgements (len(acks)), for the fault schedule.
	acked atomic.Int64
	// attempts counts requests sent; unknown those whose outcome the
	// writer could not know (refused, reset or timed out: registered or
	// not); failed those answered 5xx; rejected those answered 4xx (none
	// is expected: the level is NONE and every schema compiles);
	// abandoned the registrations given up after -op-timeout.
	attempts, unknown, failed, rejected, abandoned atomic.Int64
	// rejections keeps the first few 4xx answers for the report; errors
	// counts the other failures by kind (errorKind), for the report too.
	rejections []string
	errors     map[string]int
}

// errorKind names a failed attempt's kind briefly: its status and the
// start of its message, or the transport error's last words.
func errorKind(err error) string {
	var se *statusError
	if errors.As(err, &se) {
		var body struct {
			Message string `json:"message"`
		}
		msg := se.body
		if json.Unmarshal([]byte(se.body), &body) == nil && body.Message != "" {
			msg = body.Message
		}
		// Ports and addresses differ from one attempt to the next.
		msg = numbersOut(msg)
		if len(msg) > 60 {
			msg = msg[:60] + "..."
		}
		return fmt.Sprintf("HTTP %d %s", se.status, msg)
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:]
	}
	return msg
}

// numbersOut writes each run of digits in s as N.
func numbersOut(s string) string {
	var b strings.Builder
	inNumber := false
	for _, r := range s {
		isDigit := r >= '0' && r <= '9'
		if !isDigit {
			b.WriteRune(r)
		} else if !inNumber {
			b.WriteByte('N')
		}
		inNumber = isDigit
	}
	return b.String()
}

func (l *ledger) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.errors == nil {
		l.errors = map[string]int{}
	}
	l.errors[errorKind(err)]++
}

// errorSummary lists the failed attempts' kinds, most frequent first.
func (l *ledger) errorSummary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	kinds := make([]string, 0, len(l.errors))
	for k := range l.errors {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if l.errors[kinds[i]] != l.errors[kinds[j]] {
			return l.errors[kinds[i]] > l.errors[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d× %s", l.errors[k], k)
	}
	return strings.Join(parts, "; ")
}

func (l *ledger) ack(a Ack) {
	l.mu.Lock()
	l.acks = append(l.acks, a)
	l.mu.Unlock()
	l.acked.Add(1)
}

// pick returns a random acknowledged schema text, "" when there is none.
func (l *ledger) pick(rng *rand.Rand) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.acks) == 0 {
		return ""
	}
	return l.acks[rng.IntN(len(l.acks))].Text
}

func (l *ledger) reject(msg string) {
	l.rejected.Add(1)
	l.mu.Lock()
	if len(l.rejections) < maxDiffs {
		l.rejections = append(l.rejections, msg)
	}
	l.mu.Unlock()
}

// snapshot returns the acknowledgements so far.
func (l *ledger) snapshot() []Ack {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Ack(nil), l.acks...)
}

// writer registers schemas through one instance, each until it is
// acknowledged: a fresh schema of its own most of the time, else one
// acknowledged before (any writer's) under a random subject, which must
// get the same id.
type writer struct {
	id        int
	inst      *instance
	subjects  []string
	ops       int
	repeat    float64
	opTimeout time.Duration
	rng       *rand.Rand
	l         *ledger
}

// schemaText is writer w's n-th fresh schema: a message named after both,
// so that no two writers' schemas are the same.
func schemaText(w, n int) string {
	return fmt.Sprintf("syntax = \"proto3\";\npackage chaos.v1;\n\nmessage W%dN%d {\n  string key = 1;\n  int64 n = 2;\n  string note%d = %d;\n}\n", w, n, n, 3+n%100)
}

func (w *writer) run(ctx context.Context) {
	for n := range w.ops {
		if ctx.Err() != nil {
			return
		}
		subject := w.subjects[w.rng.IntN(len(w.subjects))]
		text := ""
		if w.rng.Float64() < w.repeat {
			text = w.l.pick(w.rng)
		}
		if text == "" {
			text = schemaText(w.id, n)
		}
		w.register(ctx, subject, text)
	}
}

// backoff is the pause before a registration's next attempt.
const (
	backoffMin = 20 * time.Millisecond
	backoffMax = 400 * time.Millisecond
)

// register sends one registration until it is acknowledged, rejected,
// or -op-timeout passes.
func (w *writer) register(ctx context.Context, subject, text string) {
	deadline := time.Now().Add(w.opTimeout)
	pause := backoffMin
	for {
		w.l.attempts.Add(1)
		w.inst.inflight.Add(1)
		id, err := w.inst.client.register(ctx, subject, text)
		w.inst.inflight.Add(-1)
		var se *statusError
		switch {
		case err == nil:
			w.l.ack(Ack{Subject: subject, Text: text, ID: id, Instance: w.inst.name})
			return
		case ctx.Err() != nil:
			return
		case errors.As(err, &se) && se.status >= 400 && se.status < 500 && se.status != http.StatusTooManyRequests:
			w.l.reject(fmt.Sprintf("%s: register %s on %s: %v", w.inst.name, label(text), subject, err))
			return
		case errors.As(err, &se):
			w.l.failed.Add(1)
			w.l.fail(err)
		default:
			w.l.unknown.Add(1)
			w.l.fail(err)
		}
		if time.Now().After(deadline) {
			w.l.abandoned.Add(1)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause + time.Duration(w.rng.Int64N(int64(pause)))):
		}
		pause = min(2*pause, backoffMax)
	}
}
