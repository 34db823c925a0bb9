package doctor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb"
)

// CheckMySQL reads innodb_flush_log_at_trx_commit, innodb_doublewrite,
// log_bin with sync_binlog, and the transaction isolation level the
// DSN's sessions get, on MySQL or MariaDB.
//
// The runtime reads the claim it races for with FOR UPDATE, the latest
// committed row, so it works under REPEATABLE READ (InnoDB's default),
// READ COMMITTED and SERIALIZABLE; READ UNCOMMITTED lets a plain read
// (the outbox relay's, a handler's) see rows of a transaction that later
// rolls back.
func CheckMySQL(ctx context.Context, dsn string) ([]Finding, error) {
	cfg, err := mysqldb.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w (want mysql://user:password@host:port/db or user:password@tcp(host:port)/db)", err)
	}
	if d, ok := ctx.Deadline(); ok {
		cfg.Timeout = time.Until(d)
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect: %w (is the server up, and the DSN's host, user and password right?)", err)
	}
	defer conn.Close()
	var version, flush, doublewrite, logBin, syncBinlog string
	if err := conn.QueryRowContext(ctx, `SELECT VERSION(), @@GLOBAL.innodb_flush_log_at_trx_commit, @@GLOBAL.innodb_doublewrite,
		@@GLOBAL.log_bin, @@GLOBAL.sync_binlog`).Scan(&version, &flush, &doublewrite, &logBin, &syncBinlog); err != nil {
		return nil, fmt.Errorf("read server variables: %w", err)
	}
	// transaction_isolation is MySQL 5.7.20+'s and MariaDB 11.1+'s name;
	// tx_isolation the older one.
	var isolation string
	err = conn.QueryRowContext(ctx, `SELECT @@SESSION.transaction_isolation`).Scan(&isolation)
	if err != nil {
		if err2 := conn.QueryRowContext(ctx, `SELECT @@SESSION.tx_isolation`).Scan(&isolation); err2 != nil {
			return nil, fmt.Errorf("read the isolation level: %w", errors.Join(err, err2))
		}
	}
	system := "mysql"
	if strings.Contains(strings.ToLower(version), "mariadb") {
		system = "mariadb"
	}
	return mysqlFindings(system, cfg.Addr, map[string]string{
		"innodb_flush_log_at_trx_commit": flush, "innodb_doublewrite": doublewrite,
		"log_bin": logBin, "sync_binlog": syncBinlog, "transaction_isolation": isolation,
	}), nil
}

func mysqlFindings(system, target string, v map[string]string) []Finding {
	var fs []Finding
	f := func(setting, value, want, risk, fix string) {
		fs = append(fs, Finding{System: system, Target: target, Setting: setting, Value: value, Want: want, Risk: risk, Fix: fix})
	}
	// 3 is MariaDB's 1 with group commit's extra syncs: durable too.
	if flush := v["innodb_flush_log_at_trx_commit"]; flush != "1" && flush != "3" {
		risk := "the redo log is written and flushed about once a second: a crash of the server loses up to a second of acknowledged commits"
		if flush == "2" {
			risk = "the redo log is flushed about once a second: a crash of the machine or a power loss loses up to a second of acknowledged commits"
		}
		f("innodb_flush_log_at_trx_commit", flush, "1", risk,
			"SET GLOBAL innodb_flush_log_at_trx_commit = 1, and innodb_flush_log_at_trx_commit = 1 under [mysqld] in my.cnf")
	}
	if dw := strings.ToUpper(v["innodb_doublewrite"]); dw != "1" && dw != "ON" && dw != "FAST" && dw != "DETECT_AND_RECOVER" {
		f("innodb_doublewrite", v["innodb_doublewrite"], "ON",
			"a page torn by a crash mid-write cannot be recovered: committed rows can be lost or corrupt (unless the file system writes pages atomically)",
			"innodb_doublewrite = 1 under [mysqld] in my.cnf and restart the server")
	}
	if lb := strings.ToUpper(v["log_bin"]); (lb == "1" || lb == "ON") && v["sync_binlog"] != "1" {
		f("sync_binlog", v["sync_binlog"], "1 (binary logging is on)",
			"the binary log is not flushed at each commit: after a crash a replica, or the server's own recovery, can miss acknowledged commits",
			"SET GLOBAL sync_binlog = 1, and sync_binlog = 1 under [mysqld] in my.cnf")
	}
	if iso := strings.ToUpper(strings.ReplaceAll(v["transaction_isolation"], " ", "-")); iso == "READ-UNCOMMITTED" {
		f("transaction_isolation", v["transaction_isolation"], "REPEATABLE-READ (or READ-COMMITTED)",
			"a read sees rows of transactions that may still roll back: the outbox relay can publish, and a handler act on, what never committed",
			"SET GLOBAL TRANSACTION ISOLATION LEVEL REPEATABLE READ, transaction-isolation = REPEATABLE-READ under [mysqld] in my.cnf, and no transaction_isolation/tx_isolation in the DSN")
	}
	return fs
}

// mysqlTarget names a DSN's server without its password.
func mysqlTarget(dsn string) string {
	cfg, err := mysqldb.ParseDSN(dsn)
	if err != nil {
		return "(unparsable DSN)"
	}
	return cfg.Addr
}
