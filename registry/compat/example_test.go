package compat_test

import (
	"context"
	"fmt"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/compat"
)

// Check reports every breaking change with its rule, the element and its
// position in the new schema. Here a producer team re-keys an event:
// wire-compatible, but old and new producers would no longer agree on the
// idempotency key, so it breaks at every level but NONE.
func ExampleCheck() {
	load := func(src string) *model.Set {
		set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"pay.proto": src}}, "pay.proto")
		if err != nil {
			panic(err)
		}
		return set
	}
	const v1 = `syntax = "proto3";
package shop.pay.v1;
import "msgcontract/v1/options.proto";
message Paid {
  option (msgcontract.v1.event) = { topic: "pay" event_type: "PAID" biz_key: "order:{order_id}" };
  string order_id = 1;
  int64 amount = 2;
}
`
	const v2 = `syntax = "proto3";
package shop.pay.v1;
import "msgcontract/v1/options.proto";
message Paid {
  option (msgcontract.v1.event) = { topic: "pay" event_type: "PAID" biz_key: "paid:{order_id}" };
  string order_id = 1;
  reserved 2;
}
`
	for _, v := range compat.Check(load(v1), load(v2), compat.Backward.Directions()) {
		fmt.Println(v)
	}
	// Output:
	// pay.proto:4:1: FIELD_DELETED_NAME_UNRESERVED: field shop.pay.v1.Paid.amount was deleted without reserving its name; add `reserved "amount";` so no later field reuses it for other JSON
	// pay.proto:5:78: EVENT_BIZ_KEY_CHANGED: event shop.pay.v1.Paid changed its biz_key from "order:{order_id}" to "paid:{order_id}"; old and new producers would key the same fact differently and dedup would miss duplicates
}
