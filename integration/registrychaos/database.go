package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
)

// database is the PostgreSQL cluster the instances share: scripts/pg-start.sh's,
// restarted by its kill.sh and start.sh.
type database struct {
	// admin is the cluster's DSN ($MSGCONTRACT_PG_DSN); dsn is the run's
	// own database in it.
	admin, dsn, name string
	// dir holds kill.sh and start.sh ($MSGCONTRACT_PG_DIR).
	dir string
	log *os.File
}

// createDatabase makes a fresh database for the run in the cluster at
// admin, with synchronous_commit set for its sessions: "on", PostgreSQL's
// default, makes a commit durable before it is acknowledged; scripts/pg-start.sh
// runs the cluster with "off", under which a crash loses the last
// commits, acknowledged or not.
func createDatabase(ctx context.Context, admin, dir, syncCommit, logPath string) (*database, error) {
	for _, script := range []string{"kill.sh", "start.sh"} {
		if _, err := os.Stat(filepath.Join(dir, script)); err != nil {
			return nil, fmt.Errorf("-pg-dir %q has no %s: run under scripts/with-postgres.sh, which exports MSGCONTRACT_PG_DIR (%v)", dir, script, err)
		}
	}
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("-pg %q is not a postgres:// URL: run under scripts/with-postgres.sh, which exports MSGCONTRACT_PG_DSN", admin)
	}
	db, err := sql.Open("pgx", admin)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	name := fmt.Sprintf("registrychaos_%d", time.Now().UnixNano())
	if _, err := db.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		return nil, fmt.Errorf("create database %s: %w (is PostgreSQL at -pg running?)", name, err)
	}
	if _, err := db.ExecContext(ctx, `ALTER DATABASE `+name+` SET synchronous_commit = `+quote(syncCommit)); err != nil {
		return nil, fmt.Errorf("set synchronous_commit = %s on %s: %w", syncCommit, name, err)
	}
	u.Path = "/" + name
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	return &database{admin: admin, dsn: u.String(), name: name, dir: dir, log: log}, nil
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// kill stops the cluster as a crash does (pg_ctl stop -m immediate).
func (d *database) kill() error { return d.script("kill.sh") }

// start starts the cluster again, on the same port and data, and returns
// once it accepts connections.
func (d *database) start() error { return d.script("start.sh") }

// script runs one of the cluster's scripts to its end, also on an
// interrupt: killed half way, start.sh could leave a server starting
// after with-postgres.sh's own kill.sh has run. Each bounds its wait
// (pg_ctl -t 60).
func (d *database) script(name string) error {
	fmt.Fprintf(d.log, "--- %s: %s\n", time.Now().UTC().Format(time.RFC3339Nano), name)
	cmd := exec.Command("bash", filepath.Join(d.dir, name))
	// A group of its own: a Ctrl-C at the terminal does not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdout, cmd.Stderr = d.log, d.log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s/%s: %w; see %s and %s/server.log", d.dir, name, err, d.log.Name(), d.dir)
	}
	return nil
}

// readView reads the registry's content from the database's tables, as
// the instances serve it: live versions and the schemas they use.
func (d *database) readView(ctx context.Context) (View, error) {
	db, err := sql.Open("pgx", d.dsn)
	if err != nil {
		return View{}, err
	}
	defer db.Close()
	w := View{Source: "db", Versions: map[string][]int{}, IDs: map[string]map[int]int64{}, Texts: map[int64]string{}}
	rows, err := db.QueryContext(ctx, `SELECT subject, version, schema_id FROM versions WHERE deleted = 0 ORDER BY subject, version`)
	if err != nil {
		return View{}, fmt.Errorf("db: read versions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			s  string
			v  int
			id int64
		)
		if err := rows.Scan(&s, &v, &id); err != nil {
			return View{}, fmt.Errorf("db: read versions: %w", err)
		}
		if _, seen := w.IDs[s]; !seen {
			w.Subjects = append(w.Subjects, s)
			w.IDs[s] = map[int]int64{}
		}
		w.Versions[s] = append(w.Versions[s], v)
		w.IDs[s][v] = id
	}
	if err := rows.Err(); err != nil {
		return View{}, fmt.Errorf("db: read versions: %w", err)
	}
	texts, err := db.QueryContext(ctx, `SELECT DISTINCT s.id, s.schema_text FROM schemas s JOIN versions v ON v.schema_id = s.id WHERE v.deleted = 0`)
	if err != nil {
		return View{}, fmt.Errorf("db: read schemas: %w", err)
	}
	defer texts.Close()
	for texts.Next() {
		var (
			id   int64
			text string
		)
		if err := texts.Scan(&id, &text); err != nil {
			return View{}, fmt.Errorf("db: read schemas: %w", err)
		}
		w.Texts[id] = text
	}
	return w, texts.Err()
}

// drop removes the run's database.
func (d *database) drop(ctx context.Context) error {
	db, err := sql.Open("pgx", d.admin)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `DROP DATABASE IF EXISTS `+d.name+` WITH (FORCE)`)
	return err
}

// verifyAudit runs `msgcontract-ops registry audit verify` on the run's
// database: the audit log that every instance appended to, crashes and
// pauses included, must still be one unbroken chain. It returns the
// command's report ("audit: N entries verified, head ...").
func (d *database) verifyAudit(ctx context.Context, ops string) (string, error) {
	out, err := exec.CommandContext(ctx, ops, "registry", "audit", "verify", "--db", d.dsn).CombinedOutput()
	report := strings.TrimSpace(string(out))
	if err != nil {
		return "", fmt.Errorf("%s registry audit verify: %v: %s", ops, err, report)
	}
	return report, nil
}

// stalledLocks lists the locks held by the run's sessions that have sat
// idle in a transaction for at least idle: those of a paused instance,
// whose transaction waits for the process to continue. Each is named
// "advisory" (a subject's registration lock) or "MODE on TABLE".
func (d *database) stalledLocks(ctx context.Context, idle time.Duration) ([]string, error) {
	db, err := sql.Open("pgx", d.dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT l.locktype, l.mode, COALESCE(c.relname, '')
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid LEFT JOIN pg_class c ON c.oid = l.relation
		WHERE a.datname = current_database() AND a.state LIKE 'idle in transaction%'
		  AND a.state_change < now() - make_interval(secs => $1) AND l.granted
		  AND (l.locktype = 'advisory' OR (l.locktype = 'relation' AND c.relname NOT LIKE 'pg\_%' AND l.mode <> 'AccessShareLock'))
		ORDER BY 1, 3`, idle.Seconds())
	if err != nil {
		return nil, fmt.Errorf("db: read pg_locks: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var kind, mode, rel string
		if err := rows.Scan(&kind, &mode, &rel); err != nil {
			return nil, err
		}
		if kind == "advisory" {
			out = append(out, "a subject's advisory lock")
			continue
		}
		out = append(out, mode+" on "+rel)
	}
	return out, rows.Err()
}
