package sqlitedb

import (
	"context"
	"time"
)

// writeGate is a database's write slot within one process: the *sql.DB's
// transactions (all BEGIN IMMEDIATE, so all writers) and its statements
// outside a transaction take it in turn, in the order they asked.
//
// SQLite has one writer per file. Without the gate, a connection that
// finds the file locked waits in SQLite's busy handler, which sleeps
// 1, 2, 5, 10 ... 100 ms between attempts: under a few concurrent writers
// a transaction that could start a fraction of a millisecond later starts
// tens of milliseconds later (make bench-latency: the producers, the relay
// and the consumer of one process share files). The gate hands the slot
// on the moment it is free. Other processes still meet at SQLite's lock
// and its busy handler.
//
// A writer that waits longer than busyTimeout for the gate goes on without
// it, to SQLite's lock and busy handler, as it would without the gate: a
// goroutine that holds a transaction and writes through a second
// connection of the same database then fails with SQLITE_BUSY after the
// busy timeout, as before, instead of waiting forever.
type writeGate chan struct{}

func newWriteGate() writeGate { return make(writeGate, 1) }

// busyTimeout is the DSN's _busy_timeout.
const busyTimeout = 30 * time.Second

// enter takes the slot; gated reports whether it did (false after
// busyTimeout, or for a nil gate). It fails only when ctx ends first.
func (g writeGate) enter(ctx context.Context) (gated bool, err error) {
	if g == nil {
		return false, nil
	}
	select {
	case g <- struct{}{}:
		return true, nil
	default:
	}
	t := time.NewTimer(busyTimeout)
	defer t.Stop()
	select {
	case g <- struct{}{}:
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	case <-t.C:
		return false, nil
	}
}

// leave frees the slot enter took.
func (g writeGate) leave(gated bool) {
	if gated {
		<-g
	}
}
