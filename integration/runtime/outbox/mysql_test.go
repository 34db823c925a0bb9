//go:build mysql

package outbox_test

import (
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
)

// The outbox on MySQL/MariaDB (make test-mysql).
func TestOutboxMySQL(t *testing.T) {
	t.Parallel()
	testOutbox(t, sqldb.MySQL)
}
