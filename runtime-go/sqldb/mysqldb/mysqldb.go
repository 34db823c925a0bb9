// Package mysqldb opens MySQL and MariaDB databases through
// github.com/go-sql-driver/mysql, adapted to what the runtime needs. It is
// separate from sqldb so that a service on SQLite does not link the MySQL
// driver.
//
// The adapter does two things:
//
//   - Statements written with $1, $2, ... (the runtime's, and handlers'
//     written for PostgreSQL) are rewritten to MySQL's ? with their
//     arguments reordered (see Rebind). Statements with ? pass unchanged.
//   - A statement whose context ends is interrupted on the server with
//     KILL QUERY from a second connection, instead of the driver's default
//     of closing the connection. The connection and its transaction
//     survive, so a handler that timed out inside a shared batch
//     transaction rolls back to its savepoint and the rest of the batch
//     commits. The statement returns the context's error. Only when the
//     server has not ended the statement within CancelGrace is the
//     connection closed.
package mysqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
)

// CancelGrace is how long a statement whose context ended may take to
// stop after KILL QUERY before its connection is closed.
const CancelGrace = 5 * time.Second

// Open opens a MySQL or MariaDB database by DSN: the driver's form
// (user:password@tcp(host:port)/dbname?param=value) or a URL
// (mysql://user:password@host:port/dbname?param=value). Unless the DSN
// says otherwise, arguments are interpolated on the client (one round
// trip per statement, no server-side prepare), and clientFoundRows is
// always off, because the runtime reads "0 rows affected" from an
// INSERT ... ON DUPLICATE KEY UPDATE that kept an existing row. The pool
// keeps sqldb.IdleConns idle connections (see sqldb.KeepIdle).
func Open(dsn string) (*sql.DB, error) {
	c, err := NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	sqldb.KeepIdle(db)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("mysqldb: connect: %w", err)
	}
	return db, nil
}

// ParseDSN parses a DSN as Open does.
func ParseDSN(dsn string) (*mysql.Config, error) {
	if rest, ok := strings.CutPrefix(dsn, "mysql://"); ok {
		u, err := url.Parse("mysql://" + rest)
		if err != nil {
			return nil, fmt.Errorf("mysqldb: parse DSN: %w", err)
		}
		cfg := mysql.NewConfig()
		cfg.Net, cfg.Addr = "tcp", u.Host
		if u.Port() == "" {
			cfg.Addr = u.Host + ":3306"
		}
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
		if len(u.Query()) > 0 {
			// The driver's own parser applies the parameters.
			c2, err := mysql.ParseDSN("/?" + u.RawQuery)
			if err != nil {
				return nil, fmt.Errorf("mysqldb: parse DSN: %w", err)
			}
			c2.Net, c2.Addr, c2.User, c2.Passwd, c2.DBName = cfg.Net, cfg.Addr, cfg.User, cfg.Passwd, cfg.DBName
			cfg = c2
		}
		if !strings.Contains(u.RawQuery, "interpolateParams") {
			cfg.InterpolateParams = true
		}
		return cfg, nil
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysqldb: parse DSN: %w", err)
	}
	if !strings.Contains(dsn, "interpolateParams") {
		cfg.InterpolateParams = true
	}
	return cfg, nil
}

// NewConnector returns the adapted connector for dsn (see Open), for
// sql.OpenDB.
func NewConnector(dsn string) (driver.Connector, error) {
	cfg, err := ParseDSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg.ClientFoundRows = false
	inner, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysqldb: %w", err)
	}
	return &connector{inner: inner}, nil
}

type connector struct {
	inner driver.Connector
}

func (c *connector) Driver() driver.Driver { return c.inner.Driver() }

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	id, err := connectionID(ctx, dc)
	if err != nil {
		dc.Close()
		return nil, fmt.Errorf("mysqldb: read CONNECTION_ID(): %w", err)
	}
	return &conn{inner: dc, id: id, c: c}, nil
}

func connectionID(ctx context.Context, dc driver.Conn) (uint64, error) {
	rows, err := dc.(driver.QueryerContext).QueryContext(ctx, "SELECT CONNECTION_ID()", nil)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	v := make([]driver.Value, 1)
	if err := rows.Next(v); err != nil {
		return 0, err
	}
	switch x := v[0].(type) {
	case int64:
		return uint64(x), nil
	case uint64:
		return x, nil
	case []byte:
		return strconv.ParseUint(string(x), 10, 64)
	}
	return 0, fmt.Errorf("unexpected type %T", v[0])
}

// kill interrupts whatever statement connection id runs, from a
// connection of its own.
func (c *connector) kill(ctx context.Context, id uint64) error {
	dc, err := c.inner.Connect(ctx)
	if err != nil {
		return err
	}
	defer dc.Close()
	_, err = dc.(driver.ExecerContext).ExecContext(ctx, "KILL QUERY "+strconv.FormatUint(id, 10), nil)
	return err
}

type conn struct {
	inner driver.Conn
	id    uint64
	c     *connector
}

var (
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
)

// guard runs a statement with a context the driver cannot cancel, and
// interrupts it with KILL QUERY when ctx ends; if the statement does not
// end within CancelGrace it cancels the driver's context, which closes
// the connection. A killed statement reports ctx's error.
func (cn *conn) guard(ctx context.Context, run func(context.Context) error) error {
	if ctx.Done() == nil {
		return run(ctx)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ictx, closeConn := context.WithCancel(context.WithoutCancel(ctx))
	stop, done := make(chan struct{}), make(chan struct{})
	var killed atomic.Bool
	go func() {
		defer close(done)
		select {
		case <-stop:
			return
		case <-ctx.Done():
		}
		killed.Store(true)
		deadline := time.NewTimer(CancelGrace)
		defer deadline.Stop()
		// KILL again while the statement runs: one that reached the
		// server before the statement did would be lost.
		for {
			kctx, cancel := context.WithTimeout(context.Background(), CancelGrace)
			_ = cn.c.kill(kctx, cn.id)
			cancel()
			select {
			case <-stop:
				return
			case <-deadline.C:
				closeConn()
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	err := run(ictx)
	close(stop)
	<-done
	if killed.Load() {
		if err != nil {
			return fmt.Errorf("%w (mysqldb: statement interrupted by KILL QUERY: %w)", ctx.Err(), err)
		}
		return ctx.Err()
	}
	return err
}

func (cn *conn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	q, args, err := rebindArgs(q, args)
	if err != nil {
		return nil, err
	}
	var res driver.Result
	err = cn.guard(ctx, func(ctx context.Context) error {
		var err error
		res, err = cn.inner.(driver.ExecerContext).ExecContext(ctx, q, args)
		return err
	})
	return res, err
}

func (cn *conn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	q, args, err := rebindArgs(q, args)
	if err != nil {
		return nil, err
	}
	var rows driver.Rows
	err = cn.guard(ctx, func(ctx context.Context) error {
		var err error
		rows, err = cn.inner.(driver.QueryerContext).QueryContext(ctx, q, args)
		return err
	})
	if err != nil && rows != nil {
		rows.Close()
		rows = nil
	}
	return rows, err
}

func rebindArgs(q string, args []driver.NamedValue) (string, []driver.NamedValue, error) {
	q, order, err := Rebind(q)
	if err != nil {
		return "", nil, err
	}
	args, err = reorder(order, args)
	return q, args, err
}

func (cn *conn) Prepare(q string) (driver.Stmt, error) {
	return cn.PrepareContext(context.Background(), q)
}

func (cn *conn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	q, order, err := Rebind(q)
	if err != nil {
		return nil, err
	}
	var st driver.Stmt
	err = cn.guard(ctx, func(ctx context.Context) error {
		var err error
		st, err = cn.inner.(driver.ConnPrepareContext).PrepareContext(ctx, q)
		return err
	})
	if err != nil {
		if st != nil {
			st.Close()
		}
		return nil, err
	}
	return &stmt{inner: st, order: order, cn: cn}, nil
}

func (cn *conn) Close() error { return cn.inner.Close() }

//nolint:staticcheck // driver.Conn requires Begin.
func (cn *conn) Begin() (driver.Tx, error) {
	return cn.BeginTx(context.Background(), driver.TxOptions{})
}

func (cn *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	var tx driver.Tx
	err := cn.guard(ctx, func(ctx context.Context) error {
		var err error
		tx, err = cn.inner.(driver.ConnBeginTx).BeginTx(ctx, opts)
		return err
	})
	if err != nil && tx != nil {
		_ = tx.Rollback()
		tx = nil
	}
	return tx, err
}

func (cn *conn) Ping(ctx context.Context) error { return cn.inner.(driver.Pinger).Ping(ctx) }

func (cn *conn) ResetSession(ctx context.Context) error {
	return cn.inner.(driver.SessionResetter).ResetSession(ctx)
}

func (cn *conn) IsValid() bool { return cn.inner.(driver.Validator).IsValid() }

func (cn *conn) CheckNamedValue(nv *driver.NamedValue) error {
	return cn.inner.(driver.NamedValueChecker).CheckNamedValue(nv)
}

type stmt struct {
	inner driver.Stmt
	order []int
	cn    *conn
}

var (
	_ driver.StmtExecContext   = (*stmt)(nil)
	_ driver.StmtQueryContext  = (*stmt)(nil)
	_ driver.NamedValueChecker = (*stmt)(nil)
)

func (s *stmt) Close() error { return s.inner.Close() }

// NumInput is unknown (-1) for a rebound statement: $N may repeat or
// skip numbers; reorder checks the arguments instead.
func (s *stmt) NumInput() int {
	if s.order != nil {
		return -1
	}
	return s.inner.NumInput()
}

func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, v := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	args, err := reorder(s.order, args)
	if err != nil {
		return nil, err
	}
	var res driver.Result
	err = s.cn.guard(ctx, func(ctx context.Context) error {
		var err error
		res, err = s.inner.(driver.StmtExecContext).ExecContext(ctx, args)
		return err
	})
	return res, err
}

func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	args, err := reorder(s.order, args)
	if err != nil {
		return nil, err
	}
	var rows driver.Rows
	err = s.cn.guard(ctx, func(ctx context.Context) error {
		var err error
		rows, err = s.inner.(driver.StmtQueryContext).QueryContext(ctx, args)
		return err
	})
	if err != nil && rows != nil {
		rows.Close()
		rows = nil
	}
	return rows, err
}

func (s *stmt) CheckNamedValue(nv *driver.NamedValue) error {
	if c, ok := s.inner.(driver.NamedValueChecker); ok {
		return c.CheckNamedValue(nv)
	}
	return s.cn.CheckNamedValue(nv)
}
