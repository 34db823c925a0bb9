package outbox

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// listen runs, on PostgreSQL, a goroutine that holds one connection of
// RelayConfig.DB with LISTEN on the outbox's channel (named like its table;
// producers in other processes NOTIFY it through a Notifier) and calls
// Notify for each notification. When the connection fails it reconnects after
// PollInterval; meanwhile the relay polls as before. stop ends the
// goroutine and waits for it.
func (r *Relay) listen(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			err := r.listenOnce(ctx)
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errNotPgx) {
				r.cfg.Logger.Info("msgcontract: outbox relay polls every PollInterval: no LISTEN", "reason", err.Error())
				return
			}
			r.cfg.Logger.Warn("msgcontract: outbox relay LISTEN failed; polling every PollInterval until it is back",
				"error", err, "poll_interval", r.cfg.PollInterval)
			t := time.NewTimer(r.cfg.PollInterval)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}()
	return func() { cancel(); wg.Wait() }
}

// errNotPgx is listenOnce's answer for a DB whose driver is not pgx's
// stdlib (pgdb.Open's): the relay then only polls.
var errNotPgx = errors.New("the database's driver is not pgx's database/sql driver (open it with pgdb.Open)")

func (r *Relay) listenOnce(ctx context.Context) error {
	conn, err := r.cfg.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var failed error
	_ = conn.Raw(func(dc any) error {
		failed = r.waitNotifications(ctx, dc)
		// A connection that LISTENs must not go back to the pool, where
		// notifications would pile up in it: driver.ErrBadConn has
		// database/sql close it.
		return driver.ErrBadConn
	})
	return failed
}

// waitNotifications LISTENs on dc and calls Notify for every notification
// until ctx ends or the connection fails.
func (r *Relay) waitNotifications(ctx context.Context, dc any) error {
	c, ok := dc.(*stdlib.Conn)
	if !ok {
		return errNotPgx
	}
	pc := c.Conn()
	// pgdb's connections answer a cancelled context with a cancel request
	// and close only after a grace period, which would hold Run's return
	// that long: a wait for notifications has no query to cancel, so the
	// socket's deadline ends it at once.
	stop := context.AfterFunc(ctx, func() { _ = pc.PgConn().Conn().SetDeadline(time.Now()) })
	defer stop()
	if _, err := pc.Exec(ctx, "LISTEN "+pgx.Identifier{Table}.Sanitize()); err != nil {
		return fmt.Errorf("LISTEN %s: %w", Table, err)
	}
	// A commit between the relay's last pass and LISTEN would go
	// unnoticed: one pass now covers it.
	r.Notify()
	for {
		if _, err := pc.WaitForNotification(ctx); err != nil {
			return err
		}
		r.Notify()
	}
}
