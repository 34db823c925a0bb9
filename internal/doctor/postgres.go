package doctor

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// CheckPostgres reads fsync, full_page_writes and synchronous_commit as
// the DSN's role and database see them (a per-role, per-database or DSN
// setting of synchronous_commit counts: it is what the application gets).
//
// synchronous_commit: off acknowledges a commit before its WAL is
// flushed; local, with synchronous standbys named, acknowledges it before
// a standby has it, so a failover loses it. on, remote_write and
// remote_apply are accepted: remote_write loses a commit only when the
// primary fails and the standby's operating system crashes too.
func CheckPostgres(ctx context.Context, dsn string) ([]Finding, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse DSN: %w (want postgres://user[:password]@host:port/db or key=value pairs)", err)
	}
	target := net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w (is the server up, and the DSN's host, user and password right?)", err)
	}
	defer conn.Close(context.Background())
	settings := map[string]string{}
	rows, err := conn.Query(ctx, `SELECT name, setting FROM pg_settings
		WHERE name IN ('fsync', 'full_page_writes', 'synchronous_commit', 'synchronous_standby_names')`)
	if err != nil {
		return nil, fmt.Errorf("read pg_settings: %w", err)
	}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, fmt.Errorf("read pg_settings: %w", err)
		}
		settings[name] = value
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read pg_settings: %w", err)
	}
	for _, name := range []string{"fsync", "full_page_writes", "synchronous_commit"} {
		if _, ok := settings[name]; !ok {
			return nil, fmt.Errorf("pg_settings has no %s: the role cannot see it", name)
		}
	}
	return postgresFindings(target, settings), nil
}

func postgresFindings(target string, s map[string]string) []Finding {
	var fs []Finding
	f := func(setting, want, risk, fix string) {
		fs = append(fs, Finding{System: "postgres", Target: target, Setting: setting, Value: s[setting], Want: want, Risk: risk, Fix: fix})
	}
	if s["fsync"] != "on" {
		f("fsync", "on", "an acknowledged commit can be lost, and the cluster corrupted, on a crash of the server or its machine",
			"set fsync = on in postgresql.conf (or ALTER SYSTEM SET fsync = on) and SELECT pg_reload_conf()")
	}
	if s["full_page_writes"] != "on" {
		f("full_page_writes", "on", "a page torn by a crash mid-write cannot be repaired from the WAL: committed rows can be lost or corrupt",
			"set full_page_writes = on in postgresql.conf (or ALTER SYSTEM SET full_page_writes = on) and SELECT pg_reload_conf()")
	}
	switch sc := s["synchronous_commit"]; {
	case sc == "off":
		f("synchronous_commit", "on (or remote_apply, remote_write)",
			"a commit is acknowledged before its WAL is flushed: a crash loses the last commits while the broker already has the message acknowledged",
			"set synchronous_commit = on in postgresql.conf (or ALTER SYSTEM SET synchronous_commit = on; SELECT pg_reload_conf()), and remove any ALTER ROLE/DATABASE ... SET synchronous_commit or DSN options that turn it off")
	case sc == "local" && s["synchronous_standby_names"] != "":
		f("synchronous_commit", "on (or remote_apply, remote_write)",
			"with synchronous standbys, local acknowledges a commit before a standby has it: a failover loses it",
			"set synchronous_commit = on in postgresql.conf (or ALTER SYSTEM SET synchronous_commit = on; SELECT pg_reload_conf())")
	}
	return fs
}

// postgresTarget names a DSN's server without its password.
func postgresTarget(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "(unparsable DSN)"
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}
