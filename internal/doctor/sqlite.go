package doctor

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3"
)

// sqliteRuntimeSynchronous is what runtime-go's sqlitedb.Open sets
// (_synchronous=NORMAL): the value assumed for a bare path, which says
// nothing of how the application opens the file.
const sqliteRuntimeSynchronous = "NORMAL"

// CheckSQLite reads a SQLite file's journal mode and the synchronous
// setting its connections get. It never creates the file nor changes its
// journal mode.
//
// spec is a path (read as runtime-go's sqlitedb.Open opens it: WAL,
// synchronous NORMAL), sqlite:PATH, sqlite://PATH, or go-sqlite3's
// file:PATH?params DSN, whose _journal_mode and _synchronous (or _sync)
// parameters are what the application's connections get.
//
// synchronous is a connection's setting, not the file's. In WAL mode
// NORMAL survives a process crash but not a crash of the machine or a
// power loss: the last commits can roll back after the broker saw their
// messages acknowledged; FULL (or EXTRA) flushes the WAL at each commit.
func CheckSQLite(ctx context.Context, spec string) ([]Finding, error) {
	path, params, err := parseSQLite(spec)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%w (give the business database's existing file)", err)
	}
	// Open read-write without creating (mode=rw) and without the DSN's
	// _journal_mode, which would convert the file.
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=rw")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var journal string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&journal); err != nil {
		return nil, fmt.Errorf("PRAGMA journal_mode: %w (is it a SQLite database?)", err)
	}
	journal = strings.ToLower(journal)
	if jm := firstParam(params, "_journal_mode", "_journal"); jm != "" {
		journal = strings.ToLower(jm) // the application's connections set it when they open
	}
	sync := sqliteRuntimeSynchronous
	source := "sqlitedb.Open's default; a bare path says nothing else"
	if params != nil {
		sync, source = "FULL", "SQLite's default: the DSN sets no _synchronous"
		for _, k := range []string{"_sync", "_synchronous"} {
			if v := params.Get(k); v != "" {
				sync, source = strings.ToUpper(v), "the DSN's "+k
			}
		}
	}
	return sqliteFindings(path, journal, sync, source), nil
}

func sqliteFindings(path, journal, sync, source string) []Finding {
	var fs []Finding
	if journal != "wal" {
		fs = append(fs, Finding{System: "sqlite", Target: path, Setting: "journal_mode", Value: journal, Want: "wal",
			Risk: "outside WAL the runtime's consumer, outbox relay and other processes block each other for whole transactions, and the runtime is built and tested for WAL only",
			Fix:  "sqlite3 " + path + " 'PRAGMA journal_mode=WAL' (kept in the file), or open it with runtime-go's sqlitedb.Open or _journal_mode=WAL in the DSN"})
	}
	switch sync {
	case "0", "OFF":
		fs = append(fs, Finding{System: "sqlite", Target: path, Setting: "synchronous", Value: sync + " (" + source + ")", Want: "FULL",
			Risk: "nothing is flushed: a crash of the machine or a power loss loses acknowledged commits and can corrupt the file",
			Fix:  "open it with _synchronous=FULL in the DSN (file:" + path + "?_journal_mode=WAL&_synchronous=FULL) or PRAGMA synchronous=FULL on each connection"})
	case "1", "NORMAL":
		fs = append(fs, Finding{System: "sqlite", Target: path, Setting: "synchronous", Value: sync + " (" + source + ")", Want: "FULL",
			Risk: "the WAL is flushed at checkpoints only: a process crash loses nothing, but a crash of the machine or a power loss can roll back the last commits after the broker saw their messages acknowledged",
			Fix:  "open it with _synchronous=FULL in the DSN (file:" + path + "?_journal_mode=WAL&_synchronous=FULL) or PRAGMA synchronous=FULL on each connection"})
	}
	return fs
}

// parseSQLite splits a SQLite spec into its file and DSN parameters (nil
// for a bare path).
func parseSQLite(spec string) (string, url.Values, error) {
	rest, isDSN := "", false
	for _, p := range []string{"sqlite://", "sqlite:", "file:"} {
		if r, ok := strings.CutPrefix(spec, p); ok {
			rest, isDSN = r, p == "file:"
			break
		}
	}
	if rest == "" && !strings.HasPrefix(spec, "sqlite:") && !strings.HasPrefix(spec, "file:") {
		if spec == "" {
			return "", nil, fmt.Errorf("empty SQLite file name")
		}
		return spec, nil, nil
	}
	path, query, _ := strings.Cut(rest, "?")
	if path == "" {
		return "", nil, fmt.Errorf("%q names no file", spec)
	}
	if !isDSN && query == "" {
		return path, nil, nil
	}
	params, err := url.ParseQuery(query)
	if err != nil {
		return "", nil, fmt.Errorf("%q: parameters: %w", spec, err)
	}
	return path, params, nil
}

func sqliteTarget(spec string) string {
	if path, _, err := parseSQLite(spec); err == nil {
		return path
	}
	return spec
}

// firstParam is the first of keys set in params (go-sqlite3 takes a
// long and a short name for each).
func firstParam(params url.Values, keys ...string) string {
	for _, k := range keys {
		if v := params.Get(k); v != "" {
			return v
		}
	}
	return ""
}
