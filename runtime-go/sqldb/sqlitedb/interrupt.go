package sqlitedb

/*
// sqlite3_interrupt is SQLite's, linked in by github.com/mattn/go-sqlite3.
void sqlite3_interrupt(void *db);
static void mc_interrupt(void *db) { sqlite3_interrupt(db); }
*/
import "C"

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/mattn/go-sqlite3"
)

// connector opens go-sqlite3 connections wrapped in conn.
type connector struct {
	dsn string
	d   *sqlite3.SQLiteDriver
	// gate is the database's one write slot within this process (see
	// writeGate).
	gate writeGate
}

func (c *connector) Driver() driver.Driver { return c.d }

func (c *connector) Connect(context.Context) (driver.Conn, error) {
	dc, err := c.d.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	sc := dc.(*sqlite3.SQLiteConn)
	h := handleOf(sc)
	if h == nil {
		return sc, nil // another driver version: its own cancellation
	}
	return &conn{SQLiteConn: sc, db: h, gate: c.gate}, nil
}

// handleOf is the connection's sqlite3 handle, which go-sqlite3 keeps in
// the unexported field db, or nil when the field is not there (another
// version of the driver; TestFastExecIsActive fails then).
func handleOf(sc *sqlite3.SQLiteConn) unsafe.Pointer {
	f := reflect.ValueOf(sc).Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() {
		return nil
	}
	return f.UnsafePointer()
}

// conn is a go-sqlite3 connection whose ExecContext honours a context
// that can end without a goroutine per statement.
//
// go-sqlite3 runs each Exec whose context can be cancelled (a handler's,
// which carries HandlerTimeout) on a goroutine of its own and waits for
// it, so that it can call sqlite3_interrupt when the context ends. On the
// runtime's batch path that goroutine and the scheduler's hand-offs cost
// 2-6 µs of CPU a message (bench-runtime, batch mode: about 22 in all).
// ExecContext here runs the statement on the calling goroutine and
// registers context.AfterFunc to interrupt it, as go-sqlite3 itself does
// for Rows: the interrupt is sent only while this statement runs (mu and
// active), and the statement then returns the context's error. Every
// other method is go-sqlite3's.
//
// SQLite rolls back the whole transaction when it interrupts a write
// statement in it, and runs the next statements outside any transaction.
// go-sqlite3 lets them; conn fails them instead (ErrTransactionLost), and
// the commit, until the transaction ends, so that a handler that goes on
// after its timeout cannot commit writes without their claim.
type conn struct {
	*sqlite3.SQLiteConn
	db unsafe.Pointer

	mu          sync.Mutex
	seq         uint64 // numbers the Execs whose context can end
	active      uint64 // the one that may be interrupted now; 0: none
	interrupted uint64 // the last one interrupted
	inTx        bool   // between BeginTx and the end of its transaction
	lost        bool   // an interrupt rolled back the open transaction

	gate  writeGate
	gated bool // the open transaction holds gate
}

// ErrTransactionLost is returned by the statements and the commit of a
// transaction that SQLite rolled back when it interrupted a statement in
// it (its context ended).
var ErrTransactionLost = errors.New("sqlitedb: the transaction was rolled back when a statement in it was interrupted")

var (
	_ driver.ExecerContext  = (*conn)(nil)
	_ driver.QueryerContext = (*conn)(nil)
	_ driver.ConnBeginTx    = (*conn)(nil)
)

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.lost = false
	gated, err := c.gate.enter(ctx)
	if err != nil {
		return nil, err
	}
	t, err := c.SQLiteConn.BeginTx(ctx, opts)
	if err != nil {
		c.gate.leave(gated)
		return nil, err
	}
	c.inTx, c.gated = true, gated
	return &tx{Tx: t, c: c}, nil
}

// end marks the transaction over and frees the write slot.
func (c *conn) end() {
	c.inTx = false
	c.gate.leave(c.gated)
	c.gated = false
}

// tx ends a transaction, which SQLite may have ended already (conn.lost).
type tx struct {
	driver.Tx
	c *conn
}

func (t *tx) Commit() error {
	defer t.c.end()
	if t.c.lost {
		t.c.lost = false
		return ErrTransactionLost
	}
	return t.Tx.Commit()
}

func (t *tx) Rollback() error {
	defer t.c.end()
	if t.c.lost {
		t.c.lost = false
		return nil // SQLite rolled it back
	}
	return t.Tx.Rollback()
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.lost {
		return nil, ErrTransactionLost
	}
	return c.SQLiteConn.QueryContext(ctx, query, args)
}

// afterFuncer is a Context that schedules calls at its end itself; see
// context.AfterFunc, which uses the method when a context has it. Calling
// it directly spares the wrapper context.AfterFunc allocates around it
// (the runtime consumer's handler contexts have it).
type afterFuncer interface {
	AfterFunc(f func()) (stop func() bool)
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if c.lost {
		return nil, ErrTransactionLost
	}
	if !c.inTx { // a statement in a transaction of its own: it writes
		gated, err := c.gate.enter(ctx)
		if err != nil {
			return nil, err
		}
		defer c.gate.leave(gated)
	}
	af, direct := ctx.(afterFuncer)
	if !direct && ctx.Done() == nil {
		return c.SQLiteConn.ExecContext(ctx, query, args)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.seq++
	token := c.seq
	c.active = token
	c.mu.Unlock()
	interrupt := func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.active == token {
			c.interrupted = token
			C.mc_interrupt(c.db)
		}
	}
	var stop func() bool
	if direct {
		stop = af.AfterFunc(interrupt)
	} else {
		stop = context.AfterFunc(ctx, interrupt)
	}
	res, err := c.SQLiteConn.ExecContext(context.Background(), query, args)
	c.mu.Lock()
	c.active = 0
	wasInterrupted := c.interrupted == token
	c.mu.Unlock()
	stop()
	// A statement that ended before the interrupt reached it reports its
	// own outcome.
	if wasInterrupted && isInterrupt(err) {
		if c.inTx && c.SQLiteConn.AutoCommit() {
			c.lost = true
			return nil, fmt.Errorf("%w (%w)", ctx.Err(), ErrTransactionLost)
		}
		return nil, ctx.Err()
	}
	return res, err
}

// isInterrupt reports whether err is SQLite's SQLITE_INTERRUPT. It is a
// function of its own so that the sqlite3.Error errors.As needs on the
// heap is allocated only for statements that were interrupted.
func isInterrupt(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrInterrupt
}
