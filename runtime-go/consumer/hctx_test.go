package consumer

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
)

type testKey struct{}

// A handlerCtx behaves as context.WithTimeout(withEnvelope(parent, env))
// would: values, deadline, the end at the deadline with
// DeadlineExceeded, AfterFunc calls, and contexts derived from it.
func TestHandlerCtxEndsAtItsDeadline(t *testing.T) {
	t.Parallel()
	env := &envelopepb.Envelope{MessageId: "m1"}
	parent := context.WithValue(context.WithoutCancel(context.Background()), testKey{}, "v")
	deadline := time.Now().Add(50 * time.Millisecond)
	hc := newHandlerCtx(parent, env, deadline)
	w := newDeadlineTimer()
	w.watch(hc, 50*time.Millisecond)
	defer w.release()

	if got, ok := EnvelopeFrom(hc); !ok || got != env {
		t.Fatalf("EnvelopeFrom = %v, %v", got, ok)
	}
	if hc.Value(testKey{}) != "v" {
		t.Fatal("the parent's value is lost")
	}
	if d, ok := hc.Deadline(); !ok || !d.Equal(deadline) {
		t.Fatalf("Deadline = %v, %v; want %v", d, ok, deadline)
	}
	var ran, stopped atomic.Int32
	context.AfterFunc(hc, func() { ran.Add(1) })
	stop := hc.AfterFunc(func() { stopped.Add(1) })
	if !stop() {
		t.Fatal("stop before the end = false, want true")
	}
	child, cancelChild := context.WithCancel(hc)
	defer cancelChild()
	if hc.Err() != nil {
		t.Fatalf("Err before the deadline = %v", hc.Err())
	}

	select {
	case <-hc.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("not done 10 s after its deadline")
	}
	if !errors.Is(hc.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err = %v, want DeadlineExceeded", hc.Err())
	}
	<-child.Done()
	if !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Fatalf("derived context's Err = %v, want DeadlineExceeded", child.Err())
	}
	if !errors.Is(context.Cause(hc), context.DeadlineExceeded) {
		t.Fatalf("Cause = %v", context.Cause(hc))
	}
	waitUntil(t, func() bool { return ran.Load() == 1 })
	hc.cancel(context.Canceled) // the end of the run: the first end stays
	if !errors.Is(hc.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err after the run ended = %v, want DeadlineExceeded still", hc.Err())
	}
	if stopped.Load() != 0 {
		t.Fatal("a stopped AfterFunc ran")
	}
	// Registered after the end: runs at once.
	late := make(chan struct{})
	if hc.AfterFunc(func() { close(late) })() {
		t.Fatal("stop after the end = true")
	}
	<-late
}

// A run that ends before its deadline is Canceled, and a reused timer
// never ends a later run before that run's own deadline, however the
// earlier runs' timeouts fall.
func TestDeadlineTimerReuse(t *testing.T) {
	t.Parallel()
	w := newDeadlineTimer()
	parent := context.WithoutCancel(context.Background())
	for i := range 300 {
		timeout := time.Duration(i%7) * 100 * time.Microsecond
		hc := newHandlerCtx(parent, nil, time.Now().Add(timeout))
		w.watch(hc, timeout)
		time.Sleep(time.Duration(i%5) * 100 * time.Microsecond)
		w.release()
		hc.cancel(context.Canceled)
		if err := hc.Err(); !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("run %d: Err = %v", i, err)
		}
		// The next run with a long deadline must stay live across any
		// firing meant for this one.
		long := newHandlerCtx(parent, nil, time.Now().Add(time.Hour))
		w.watch(long, time.Hour)
		time.Sleep(200 * time.Microsecond)
		if err := long.Err(); err != nil {
			t.Fatalf("run %d: a live run ended: %v", i, err)
		}
		w.release()
		long.cancel(context.Canceled)
	}
	// A run whose deadline is earlier than the pending firing (a shorter
	// timeout) moves the firing up: it ends at its own deadline.
	long := newHandlerCtx(parent, nil, time.Now().Add(time.Hour))
	w.watch(long, time.Hour)
	w.release()
	long.cancel(context.Canceled)
	short := newHandlerCtx(parent, nil, time.Now().Add(20*time.Millisecond))
	w.watch(short, 20*time.Millisecond)
	select {
	case <-short.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a short run after a long one was not ended at its deadline")
	}
	w.release()
	if !errors.Is(short.Err(), context.DeadlineExceeded) {
		t.Fatalf("short run: Err = %v, want DeadlineExceeded", short.Err())
	}
	hc := newHandlerCtx(parent, nil, time.Now().Add(time.Hour))
	w.watch(hc, time.Hour)
	w.release()
	hc.cancel(context.Canceled)
	if !errors.Is(hc.Err(), context.Canceled) {
		t.Fatalf("Err of a run that ended = %v, want Canceled", hc.Err())
	}
	select {
	case <-hc.Done():
	default:
		t.Fatal("Done not closed after the run ended")
	}
}

// sqlitedb interrupts a statement through a handlerCtx's own AfterFunc
// when the deadline passes.
func TestHandlerCtxInterruptsSQLite(t *testing.T) {
	t.Parallel()
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hc := newHandlerCtx(context.WithoutCancel(context.Background()), nil, time.Now().Add(100*time.Millisecond))
	w := newDeadlineTimer()
	w.watch(hc, 100*time.Millisecond)
	defer w.release()
	// Should the deadline never end it, this does, failing the test
	// (Canceled) instead of hanging it.
	watchdog := time.AfterFunc(30*time.Second, func() { hc.cancel(context.Canceled) })
	defer watchdog.Stop()
	const forever = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c`
	if _, err := db.ExecContext(hc, forever); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("endless statement = %v, want DeadlineExceeded", err)
	}
	if _, err := db.ExecContext(context.Background(), `CREATE TABLE t (v INTEGER)`); err != nil {
		t.Fatalf("the connection after the interrupt: %v", err)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("condition not met in 10 s")
		}
	}
}
