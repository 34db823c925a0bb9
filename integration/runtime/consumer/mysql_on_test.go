//go:build mysql

package consumer_test

import (
	"database/sql"
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb/mysqltest"
)

// mysqlBackend gives each test a database of its own on the server of
// MSGCONTRACT_MYSQL_DSN (scripts/with-mariadb.sh, make test-mysql).
var mysqlBackend = dbBackend{"mysql", func(t *testing.T) (*sql.DB, sqldb.Dialect) {
	return mysqltest.Open(t), sqldb.MySQL
}}

// mysqlMatrix adds MySQL/MariaDB to the fault matrix when built with
// -tags mysql, per message and batched.
func mysqlMatrix() []matrixEntry {
	return []matrixEntry{
		{mysqlBackend, sqliteBroker, false},
		{mysqlBackend, sqliteBroker, true},
	}
}

func mysqlBackends() []dbBackend { return []dbBackend{mysqlBackend} }
