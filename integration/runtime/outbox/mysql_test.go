//go:build mysql

package outbox_test

import (
	"fmt"
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
)

// The outbox on MySQL/MariaDB (make test-mysql), row by row and batched,
// as TestOutbox runs it on SQLite and PostgreSQL.
func TestOutboxMySQL(t *testing.T) {
	t.Parallel()
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			t.Parallel()
			testOutbox(t, sqldb.MySQL, batch)
		})
	}
}
