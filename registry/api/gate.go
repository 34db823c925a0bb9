package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/schema"
)

// compileGate bounds what compiling client-supplied schemas can cost:
// look-ups and compatibility checks need no token, so anyone can send a
// 4 MiB schema. At most cap(slots) compilations run at once, each request
// waits for a slot and for its compilation no longer than the timeout, and
// a compilation whose request is gone (answered, timed out, disconnected)
// stops, since its context is cancelled: at once when it runs in a worker
// process (Config.Workers, which is killed), at its next phase when it
// runs in this one. A slot is held
// until the compilation really ends, not until its request is answered,
// so abandoned work still counts against the limit and the CPU spent on
// compiling never exceeds cap(slots) cores.
type compileGate struct {
	slots   chan struct{}
	timeout time.Duration

	mu    sync.Mutex
	stats GateStats
	idle  *sync.Cond
}

// GateStats counts what the compile gate did, for tests and benchmarks.
type GateStats struct {
	// Running is the number of compilations under way now; Peak the most
	// that ever ran at once.
	Running, Peak int
	// Refused counts requests answered 503 because no slot freed up or
	// their compilation did not finish in time.
	Refused int
	// Abandoned counts compilations that stopped because their request
	// was gone (their context was done).
	Abandoned int
}

func newCompileGate(limit int, timeout time.Duration) *compileGate {
	g := &compileGate{slots: make(chan struct{}, limit), timeout: timeout}
	g.idle = sync.NewCond(&g.mu)
	return g
}

// CodeTimedOut is Confluent's "operation timed out" code; the registry
// answers it with 503 and Retry-After when compiling a schema would exceed
// its time or concurrency budget.
const CodeTimedOut = 50002

// heldSlot is a compilation slot a request took before reading its body;
// run takes it over, or the budget middleware releases it.
type heldSlot struct {
	g     *compileGate
	taken bool
}

type heldSlotKey struct{}

// deadlineKey carries, in a request's context, when its budget for reading
// the body and compiling its schema runs out.
type deadlineKey struct{}

// acquire takes a slot, waiting until ctx is done at most.
func (g *compileGate) acquire(ctx context.Context) error {
	start := time.Now()
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return g.refuse(refusedBusy, cap(g.slots), time.Since(start).Round(time.Millisecond))
	}
}

func (g *compileGate) release() { <-g.slots }

// run compiles through the gate, in the slot the request already holds or
// in one it waits for.
func (g *compileGate) run(ctx context.Context, compile func(context.Context) (*schema.Parsed, error)) (*schema.Parsed, error) {
	deadline, ok := ctx.Value(deadlineKey{}).(time.Time)
	if !ok {
		deadline = time.Now().Add(g.timeout)
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel() // an abandoned compilation sees this and stops
	if h, ok := ctx.Value(heldSlotKey{}).(*heldSlot); ok && h.g == g && !h.taken {
		h.taken = true
	} else if err := g.acquire(ctx); err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.stats.Running++
	g.stats.Peak = max(g.stats.Peak, g.stats.Running)
	g.mu.Unlock()

	type result struct {
		p   *schema.Parsed
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: fmt.Errorf("compiling the schema panicked: %v", p)}
			}
			g.mu.Lock()
			g.stats.Running--
			if r.err != nil && ctx.Err() != nil {
				g.stats.Abandoned++
			}
			g.idle.Broadcast()
			g.mu.Unlock()
			g.release()
			done <- r
		}()
		r.p, r.err = compile(ctx)
	}()
	select {
	case r := <-done:
		if r.err != nil && ctx.Err() != nil {
			return nil, g.refuse(refusedCompiling, g.timeout)
		}
		return r.p, r.err
	case <-ctx.Done():
		return nil, g.refuse(refusedCompiling, g.timeout)
	}
}

func (g *compileGate) refuse(what string, args ...any) *Error {
	g.mu.Lock()
	g.stats.Refused++
	g.mu.Unlock()
	return timedOut(what, args...)
}

// Why a request's compilation was refused, as its answer says it.
const (
	refusedBusy      = "all %d schema compilation slots stayed busy for %v; the registry bounds how many schemas compile at once (--max-compilations): retry in a second"
	refusedCompiling = "schema compilation exceeded %v and was stopped (--compile-timeout); split the file into smaller ones joined by references, or retry when the registry is less busy"
)

// timedOut is the 503 answer, with Retry-After, to a request that ran out
// of its time budget.
func timedOut(format string, args ...any) *Error {
	e := apiErr(http.StatusServiceUnavailable, CodeTimedOut, format, args...)
	e.retryAfter = 1
	return e
}

// Stats returns what the gate has done so far.
func (g *compileGate) Stats() GateStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stats
}

// waitIdle blocks until no compilation runs or ctx is done.
func (g *compileGate) waitIdle(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		g.mu.Lock()
		g.idle.Broadcast()
		g.mu.Unlock()
	})
	defer stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.stats.Running > 0 {
		if ctx.Err() != nil {
			return errors.New("compilations still running: " + ctx.Err().Error())
		}
		g.idle.Wait()
	}
	return nil
}

// smallBody is the largest body a request reads before it holds a
// compilation slot. Reading and decoding a body of megabytes costs CPU
// too; larger requests wait for a slot first, so that what requests beyond
// MaxCompilations cost is the wait, not the work.
const smallBody = 64 << 10

// budget starts a request's time budget when it arrives, so that reading
// and decoding its body count too: the request context gets g's timeout,
// and the connection a read deadline at the same instant. A request with a
// large (or unannounced) body takes its compilation slot before reading it.
func (s *Server) budget(g *compileGate) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			deadline := time.Now().Add(g.timeout)
			// Not every ResponseWriter supports deadlines (httptest's
			// recorder does not); the compilation's context still has it.
			_ = http.NewResponseController(c.Response().Writer).SetReadDeadline(deadline)
			// The deadline bounds reading the body and compiling the
			// request's schema, not the store reads and the check that
			// follow, which depend on what is stored, not on the request.
			ctx := context.WithValue(r.Context(), deadlineKey{}, deadline)
			if r.ContentLength < 0 || r.ContentLength > smallBody {
				// A large request that finds every slot busy is most likely
				// one of many: it waits a quarter of its budget, so that a
				// refusal comes early and the slot's holder keeps its time.
				wait, cancel := context.WithDeadline(ctx, time.Now().Add(g.timeout/4))
				err := g.acquire(wait)
				cancel()
				if err != nil {
					return err // answered, then drained: see answerFirst
				}
				h := &heldSlot{g: g}
				defer func() {
					if !h.taken {
						g.release()
					}
				}()
				ctx = context.WithValue(ctx, heldSlotKey{}, h)
			}
			c.SetRequest(r.WithContext(ctx))
			return next(c)
		}
	}
}

// drainFor bounds how long a refused request's body is drained.
const drainFor = 2 * time.Second

// answerFirst answers a request that failed — refused because every
// compilation slot is busy, its body is too large, or it ran out of its
// time budget — and flushes the answer before draining what is left of
// its body, for at most drainFor, so that a client still sending a large
// body sees the refusal at once instead of after the drain.
func (s *Server) answerFirst(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		err := next(c)
		if err == nil || c.Response().Committed {
			return err
		}
		rc := http.NewResponseController(c.Response().Writer)
		// HTTP/1.x would otherwise stop reading a body once the answer
		// is written; draining it is what keeps the connection from
		// ending in a reset.
		_ = rc.EnableFullDuplex()
		s.handleError(err, c)
		_ = rc.Flush()
		drain(c)
		return nil
	}
}

// drain reads what is left of an answered request's body, for at most
// drainFor, without looking at it: net/http closes a connection whose
// large body was left unread, and clients still writing it then see a
// reset instead of the answer.
func drain(c echo.Context) {
	_ = http.NewResponseController(c.Response().Writer).SetReadDeadline(time.Now().Add(drainFor))
	// The unlimited body: http.MaxBytesReader keeps returning the error it
	// met (a timeout, say), and a body bigger than the limit still has to
	// be read off the connection, for at most drainFor.
	body, ok := c.Get(rawBodyKey).(io.Reader)
	if !ok {
		body = c.Request().Body
	}
	if _, err := io.Copy(io.Discard, body); err == nil {
		// All read: the connection may serve the next request. One whose
		// body is still arriving keeps the passed deadline, so net/http
		// gives up on it instead of waiting for the rest.
		clearReadDeadline(c)
	}
}

// rawBodyKey keeps, in the echo context, the request body before the
// body limit wrapped it.
const rawBodyKey = "msgcontract.rawBody"

// clearReadDeadline lifts the read deadline budget set once the body is
// read: net/http keeps reading the connection in the background to notice
// a client going away, and a deadline passing there would cancel the
// connection's context, and with it the next requests on it.
func clearReadDeadline(c echo.Context) {
	_ = http.NewResponseController(c.Response().Writer).SetReadDeadline(time.Time{})
}
