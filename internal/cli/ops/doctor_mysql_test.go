//go:build mysql

package ops

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb/mysqltest"
)

// TestDoctorMySQL runs on the throwaway MariaDB of scripts/with-mariadb.sh
// (make test-mysql), started with innodb-flush-log-at-trx-commit=0 and
// innodb-doublewrite=0: both are findings. SET GLOBAL fixes the first
// (and makes it 2, the machine-crash risk, for a while); the doublewrite
// buffer cannot change while MariaDB 10.11 runs, so it stays. A DSN that
// sets READ UNCOMMITTED for its sessions is a finding too. The server's
// setting is restored when the test ends.
func TestDoctorMySQL(t *testing.T) {
	t.Parallel()
	dsn := os.Getenv(mysqltest.Env)
	if dsn == "" {
		t.Fatalf("%s is not set: run through make test-mysql (scripts/with-mariadb.sh)", mysqltest.Env)
	}
	db, err := mysqldb.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // after the restore below
	var before string
	if err := db.QueryRow(`SELECT @@GLOBAL.innodb_flush_log_at_trx_commit`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if before != "0" {
		t.Skipf("innodb_flush_log_at_trx_commit is %s: not the weakened server of scripts/mariadb-start.sh, which this test alters", before)
	}
	t.Cleanup(func() {
		if _, err := db.Exec(`SET GLOBAL innodb_flush_log_at_trx_commit = ` + before); err != nil {
			t.Errorf("restore innodb_flush_log_at_trx_commit: %v", err)
		}
	})
	readUncommitted := dsn + "?tx_isolation=%27READ-UNCOMMITTED%27"
	tests := []struct {
		name, set, dsn string
		want           []string
	}{
		{"as started", "", dsn, []string{"innodb_flush_log_at_trx_commit=0", "innodb_doublewrite=0"}},
		{"READ UNCOMMITTED in the DSN", "", readUncommitted,
			[]string{"innodb_flush_log_at_trx_commit=0", "innodb_doublewrite=0", "transaction_isolation=READ-UNCOMMITTED"}},
		{"flushed once a second", "SET GLOBAL innodb_flush_log_at_trx_commit = 2", dsn, []string{"innodb_flush_log_at_trx_commit=2", "innodb_doublewrite=0"}},
		{"flushed at each commit", "SET GLOBAL innodb_flush_log_at_trx_commit = 1", dsn, []string{"innodb_doublewrite=0"}},
	}
	for _, tt := range tests {
		if tt.set != "" {
			if _, err := db.Exec(tt.set); err != nil {
				t.Fatalf("%s: %v", tt.set, err)
			}
		}
		code, rep, errOut := runDoctor(t, "--mysql", tt.dsn)
		if got := settingsOf(rep); code != cli.ExitFindings || !slices.Equal(got, tt.want) {
			t.Errorf("%s: exit %d, findings %q (want %q)\n%s", tt.name, code, got, tt.want, errOut)
		}
		for _, f := range rep.Findings {
			if f.System != "mariadb" || !strings.HasPrefix(f.Target, "127.0.0.1:") || f.Fix == "" {
				t.Errorf("%s: finding %+v", tt.name, f)
			}
		}
	}
	// The risk a value of 2 carries differs from 0's.
	code, out, _ := run(t, "doctor", "--mysql", dsn)
	if code != cli.ExitFindings || !strings.Contains(out, "innodb_doublewrite=0 (want ON): ") || strings.Contains(out, "innodb_flush_log_at_trx_commit") {
		t.Errorf("text: exit %d\n%s", code, out)
	}
}
