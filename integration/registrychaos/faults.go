package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"
)

// faultRecord is one fault as it happened.
type faultRecord struct {
	// what says what was done: "SIGKILL r2", "SIGSTOP r3", "PostgreSQL restart".
	what string
	// at is when, from the start of the writes.
	at time.Duration
	// inflight counts the writes in flight at the target when it struck.
	inflight int64
	// down is how long the target was gone or paused, until it
	// answered again (the killed instance listening, PostgreSQL accepting
	// connections, the paused instance continued).
	down time.Duration
	// ackedMeanwhile counts the registrations acknowledged while it was:
	// by the other instances, for an instance's kill or pause.
	ackedMeanwhile int64
	// held lists, for a pause, the locks the paused instance's open
	// transaction held half way through it.
	held []string
}

func (f faultRecord) String() string {
	s := fmt.Sprintf("%s at %.1fs, writes in flight there: %d; back after %.1fs, %d registrations acknowledged meanwhile",
		f.what, f.at.Seconds(), f.inflight, f.down.Seconds(), f.ackedMeanwhile)
	if f.held != nil {
		s += "; the paused instance's transaction held " + strings.Join(f.held, ", ")
	}
	return s
}

// schedule is when and how long the faults strike: each at a share of the
// writes acknowledged, one after the other, so that each lands mid-write
// whatever the machine's speed.
type schedule struct {
	total        int
	killAt       float64
	stopAt       float64
	dbAt         float64
	restartAfter time.Duration
	stopFor      time.Duration
	dbDown       time.Duration
}

// errWritesDone means the writers finished before a fault was due.
var errWritesDone = errors.New("the writers finished before every fault struck; raise -writes")

// runFaults SIGKILLs killed (and starts it again), SIGSTOPs stopped (and
// continues it) and restarts db, in that order, at the schedule's shares
// of l's acknowledgements. done closes when the writers finish.
func runFaults(ctx context.Context, s schedule, begin time.Time, l *ledger, killed, stopped *instance, all []*instance, db *database, done <-chan struct{}) ([]faultRecord, error) {
	var out []faultRecord
	due := func(share float64) error {
		n := int64(share * float64(s.total))
		return waitFor(ctx, done, func() bool { return l.acked.Load() >= n })
	}
	// midWrite waits, briefly, for a write in flight at the target, so
	// that the fault interrupts one.
	midWrite := func(targets ...*instance) int64 {
		var n int64
		_ = waitFor(ctx, nil, func() bool {
			n = 0
			for _, in := range targets {
				n += in.inflight.Load()
			}
			return n > 0
		}, time.Second)
		return n
	}

	if err := due(s.killAt); err != nil {
		return out, err
	}
	f := faultRecord{what: "SIGKILL " + killed.name, inflight: midWrite(killed)}
	f.at = time.Since(begin)
	t0, acked0 := time.Now(), l.acked.Load()
	killed.kill()
	select {
	case <-ctx.Done():
		return out, ctx.Err()
	case <-time.After(s.restartAfter):
	}
	if err := killed.start(ctx); err != nil {
		return out, fmt.Errorf("restart after SIGKILL: %w", err)
	}
	f.down, f.ackedMeanwhile = time.Since(t0), l.acked.Load()-acked0
	out = append(out, f)

	if err := due(s.stopAt); err != nil {
		return out, err
	}
	f = faultRecord{what: "SIGSTOP " + stopped.name, inflight: midWrite(stopped)}
	f.at = time.Since(begin)
	t0, acked0 = time.Now(), l.acked.Load()
	if err := stopped.signal(syscall.SIGSTOP); err != nil {
		return out, err
	}
	// Half way through the pause, what does the paused instance hold?
	select {
	case <-ctx.Done():
		_ = stopped.signal(syscall.SIGCONT)
		return out, ctx.Err()
	case <-time.After(s.stopFor / 2):
	}
	held, err := db.stalledLocks(ctx, s.stopFor/4)
	if err != nil {
		_ = stopped.signal(syscall.SIGCONT)
		return out, err
	}
	f.held = append([]string{}, held...)
	if len(held) == 0 {
		f.held = []string{"no lock"}
	}
	select {
	case <-ctx.Done():
		_ = stopped.signal(syscall.SIGCONT)
		return out, ctx.Err()
	case <-time.After(s.stopFor - time.Since(t0)):
	}
	if err := stopped.signal(syscall.SIGCONT); err != nil {
		return out, err
	}
	f.down, f.ackedMeanwhile = time.Since(t0), l.acked.Load()-acked0
	out = append(out, f)

	if err := due(s.dbAt); err != nil {
		return out, err
	}
	f = faultRecord{what: "PostgreSQL restart", inflight: midWrite(all...)}
	f.at = time.Since(begin)
	t0, acked0 = time.Now(), l.acked.Load()
	if err := db.kill(); err != nil {
		return out, err
	}
	// Started again even on an interrupt, so that the cluster is left as
	// with-postgres.sh expects to stop it.
	time.Sleep(s.dbDown)
	if err := db.start(); err != nil {
		return out, err
	}
	f.down, f.ackedMeanwhile = time.Since(t0), l.acked.Load()-acked0
	out = append(out, f)
	return out, nil
}

// waitFor polls cond until it holds (nil), ctx ends, done closes
// (errWritesDone) or the optional limit passes (an error).
func waitFor(ctx context.Context, done <-chan struct{}, cond func() bool, limit ...time.Duration) error {
	var expire <-chan time.Time
	if len(limit) > 0 {
		t := time.NewTimer(limit[0])
		defer t.Stop()
		expire = t.C
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			if cond() {
				return nil
			}
			return errWritesDone
		case <-expire:
			return errors.New("condition not met in time")
		case <-tick.C:
		}
	}
	return nil
}
