package sqlitequeue

import (
	"database/sql"
	"slices"

	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

var sqlNoRows = sql.ErrNoRows

type txExec = *sql.Tx

func sortByOffset(ds []*transport.Delivery) {
	slices.SortFunc(ds, func(a, b *transport.Delivery) int {
		switch {
		case a.Offset < b.Offset:
			return -1
		case a.Offset > b.Offset:
			return 1
		}
		return 0
	})
}
