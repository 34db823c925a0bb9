package sqlitequeue

import (
	"cmp"
	"slices"

	"github.com/msgcontract/msgcontract/runtime-go/transport"
)

// sortByOffset orders deliveries by queue row id: RETURNING promises no
// order.
func sortByOffset(ds []*transport.Delivery) {
	slices.SortFunc(ds, func(a, b *transport.Delivery) int { return cmp.Compare(a.Offset, b.Offset) })
}
