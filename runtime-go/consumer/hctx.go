package consumer

import (
	"context"
	"sync"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// handlerCtx is a handler run's context when its parent cannot be
// cancelled (the usual case: a worker runs handlers under
// context.WithoutCancel). It is what context.WithTimeout(withEnvelope(
// parent, env), HandlerTimeout) would be: the envelope as a value, the
// deadline, Done closed and Err context.DeadlineExceeded when the deadline
// passes, context.Canceled when the run ends first. It costs one object a
// run instead of about ten (the value context, the timer context, its
// timer, and what context.AfterFunc adds per statement a driver watches):
// a pooled deadlineTimer, reset per run, ends it, and it schedules
// AfterFunc calls itself (context.AfterFunc uses the method, and sqlitedb
// calls it directly), so contexts derived from it need no goroutine.
type handlerCtx struct {
	parent   context.Context
	env      *envelopepb.Envelope
	deadline time.Time

	mu   sync.Mutex
	done chan struct{} // made on first use
	err  error
	seq  uint64
	regs []afterReg // AfterFunc calls to make at the end; in buf until it grows
	buf  [2]afterReg
}

type afterReg struct {
	id uint64
	f  func()
}

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func newHandlerCtx(parent context.Context, env *envelopepb.Envelope, deadline time.Time) *handlerCtx {
	c := &handlerCtx{parent: parent, env: env, deadline: deadline}
	c.regs = c.buf[:0]
	return c
}

func (c *handlerCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *handlerCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		if c.err != nil {
			return closedChan
		}
		c.done = make(chan struct{})
	}
	return c.done
}

func (c *handlerCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *handlerCtx) Value(key any) any {
	if key == (envKey{}) {
		return c.env
	}
	return c.parent.Value(key)
}

func (c *handlerCtx) String() string { return "consumer.handlerCtx" }

// AfterFunc arranges to call f in its own goroutine when c ends, as
// context.AfterFunc does; stop reports whether it kept f from starting.
func (c *handlerCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		go f()
		return func() bool { return false }
	}
	c.seq++
	id := c.seq
	c.regs = append(c.regs, afterReg{id: id, f: f})
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, r := range c.regs {
			if r.id == id {
				last := len(c.regs) - 1
				c.regs[i] = c.regs[last]
				c.regs[last] = afterReg{}
				c.regs = c.regs[:last]
				return true
			}
		}
		return false
	}
}

// cancel ends c with err (the first end counts) and starts its AfterFunc
// calls.
func (c *handlerCtx) cancel(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	if c.done == nil {
		c.done = closedChan
	} else {
		close(c.done)
	}
	regs := c.regs
	c.regs = nil
	c.mu.Unlock()
	for _, r := range regs {
		go r.f()
	}
}

// deadlineTimer ends the handlerCtx of one run at a time at its deadline;
// Consumer.timers pools them, so a worker reuses one timer across runs.
// A run arms the timer only when no firing is due by its deadline: runs
// end long before their deadline, and a later run's deadline is later, so
// the firing meant for an earlier run finds the current one not yet due
// and rearms for it. A run thus costs no timer operation, and the timer
// fires about once a HandlerTimeout while runs go on.
type deadlineTimer struct {
	t     *time.Timer
	mu    sync.Mutex
	cur   *handlerCtx
	armed bool      // a firing is pending
	when  time.Time // when it is due, if armed
}

func newDeadlineTimer() *deadlineTimer {
	w := &deadlineTimer{}
	w.t = time.AfterFunc(time.Hour, w.fire)
	w.t.Stop()
	return w
}

// watch arms w for c, whose deadline is timeout from about now.
func (w *deadlineTimer) watch(c *handlerCtx, timeout time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cur = c
	if !w.armed || c.deadline.Before(w.when) {
		w.armed, w.when = true, c.deadline
		w.t.Reset(timeout)
	}
}

// release ends w's watch over its run.
func (w *deadlineTimer) release() {
	w.mu.Lock()
	w.cur = nil
	w.mu.Unlock()
}

// fire ends the current run's context once its deadline has passed, and
// rearms for a run whose deadline is still to come.
func (w *deadlineTimer) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	c := w.cur
	if c == nil {
		return
	}
	if d := time.Until(c.deadline); d > 0 {
		w.armed, w.when = true, c.deadline
		w.t.Reset(d)
		return
	}
	c.cancel(context.DeadlineExceeded)
}
