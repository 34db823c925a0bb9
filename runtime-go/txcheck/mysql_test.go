//go:build mysql

package txcheck_test

import (
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb/mysqltest"
)

// TestCheckOnMySQL runs on a database of its own on the server
// MSGCONTRACT_MYSQL_DSN names (make test-mysql starts a MariaDB).
func TestCheckOnMySQL(t *testing.T) {
	checkAnswersFromTheTable(t, mysqltest.Open(t), sqldb.MySQL)
}
