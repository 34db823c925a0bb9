//go:build mysql

// Package txcheck_test runs runtime-go's check-back table suite
// (txcheck/txchecktest) on MariaDB, for make test-mysql.
package txcheck_test

import (
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb/mysqltest"
	"github.com/msgcontract/msgcontract/runtime-go/txcheck/txchecktest"
)

// TestCheckOnMySQL runs on a database of its own on the server
// MSGCONTRACT_MYSQL_DSN names (make test-mysql starts a MariaDB).
func TestCheckOnMySQL(t *testing.T) {
	txchecktest.AnswersFromTheTable(t, mysqltest.Open(t), sqldb.MySQL)
}
