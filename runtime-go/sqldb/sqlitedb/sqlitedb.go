// Package sqlitedb opens SQLite databases (github.com/mattn/go-sqlite3, cgo)
// with the settings the runtime's stores need. It is separate from sqldb so
// that a service on PostgreSQL does not link SQLite.
package sqlitedb

import (
	"database/sql"
	"fmt"
	"net/url"
	"strconv"

	"github.com/mattn/go-sqlite3"
)

// Open opens (creating it if missing) the SQLite database file at
// path, in WAL mode, with a 30 s busy timeout and BEGIN IMMEDIATE
// transactions, so that several goroutines and processes writing the same
// file wait for each other instead of failing with SQLITE_BUSY, and with
// temporary files in memory (see memoryTemp). Within the process the
// returned DB's writers take turns at a gate (see writeGate) instead of
// sleeping in SQLite's busy handler.
//
// Its connections are go-sqlite3's, except that an Exec whose context can
// end runs on the calling goroutine and is interrupted through
// context.AfterFunc (see conn). That needs the connection's sqlite3
// handle, an unexported field of go-sqlite3's SQLiteConn read by
// reflection; TestFastExecIsActive fails if a go-sqlite3 upgrade moves
// it, and the connections then fall back to go-sqlite3's own behaviour.
// Code that unwraps a connection with (*sql.Conn).Raw gets that wrapper,
// not a *sqlite3.SQLiteConn.
func Open(path string) (*sql.DB, error) {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", strconv.Itoa(int(busyTimeout.Milliseconds())))
	q.Set("_txlock", "immediate")
	q.Set("_synchronous", "NORMAL")
	q.Set("_foreign_keys", "1")
	q.Set("_stmt_cache_size", "64")
	db := sql.OpenDB(&connector{dsn: "file:" + path + "?" + q.Encode(), d: &sqlite3.SQLiteDriver{ConnectHook: memoryTemp}, gate: newWriteGate()})
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitedb: open %s: %w", path, err)
	}
	return db, nil
}

// memoryTemp keeps a connection's temporary files in memory (PRAGMA
// temp_store = MEMORY). The one the runtime makes is a savepoint's
// statement journal: the consumer keeps a savepoint open over a fetch's
// claims, handlers and acknowledgement (to lease the fetch instead should
// a handler fail), and SQLite copies each page it then changes into that
// journal, which it spills to a new temporary file past 64 KiB: a file
// created, written and removed per transaction (bench-runtime, batch mode:
// about one in five of its writes). The cost is that sorts and temporary
// tables larger than the page cache take memory instead of disk.
func memoryTemp(c *sqlite3.SQLiteConn) error {
	_, err := c.Exec("PRAGMA temp_store = MEMORY", nil)
	return err
}
