//go:build mysql

package ops

import (
	"os"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb/mysqltest"
)

// dedup conflicts lists a conflict recorded in a MySQL/MariaDB database
// given as a mysql:// URL (make test-mysql).
func TestDedupConflictsMySQL(t *testing.T) {
	t.Parallel()
	cfg, err := mysqldb.ParseDSN(mysqltest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	db, err := mysqldb.Open(cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recordConflict(t, db, sqldb.MySQL)
	// The URL form of the test's database.
	base := os.Getenv(mysqltest.Env)
	url := base[:strings.LastIndex(base, "/")+1] + cfg.DBName
	code, out, errOut := run(t, "dedup", "conflicts", "--db", url, "--handler", "record-payment")
	if code != cli.ExitOK || !strings.Contains(out, "order:1:PAID") || !strings.Contains(out, "1 conflict\n") {
		t.Fatalf("conflicts: exit %d\n%s%s", code, out, errOut)
	}
}
