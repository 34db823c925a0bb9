package ops

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/client"
	"github.com/msgcontract/msgcontract/registry/datacontract"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// examplesDir is examples/proto, relative to this package.
var examplesDir = filepath.Join("..", "..", "..", "examples", "proto")

// nestedProto has a biz_key over a dotted path, an optional field, a
// number and an enum, in two events that share only {customer.id}.
const nestedProto = `syntax = "proto3";
package shop.nested.v1;
import "msgcontract/v1/options.proto";
message Customer { string id = 1; }
enum Channel { CHANNEL_UNSPECIFIED = 0; WEB = 1; }
message Ordered {
  option (msgcontract.v1.event) = { topic: "orders" event_type: "ORDERED" biz_key: "{customer.id}:{seq}:{channel}:{coupon}" };
  Customer customer = 1;
  int64 seq = 2;
  Channel channel = 3;
  optional string coupon = 4;
}
message Cancelled {
  option (msgcontract.v1.event) = { topic: "orders" event_type: "CANCELLED" biz_key: "{customer.id}:{reason}" };
  Customer customer = 1;
  string reason = 2;
}
`

// statesProto has two events with a target state each and a state field
// of the same name, mixedStatesProto two whose state fields are named
// differently.
const statesProto = `syntax = "proto3";
package shop.states.v1;
import "msgcontract/v1/options.proto";
enum OrderState {
  option (msgcontract.v1.state_machine) = {};
  ORDER_STATE_UNSPECIFIED = 0;
  PAYING = 1;
  PAID = 2 [(msgcontract.v1.transition) = { from: ["PAYING"] }];
  CANCELLED = 3 [(msgcontract.v1.transition) = { from: ["PAYING"] }];
}
message OrderPaid {
  option (msgcontract.v1.event) = { topic: "order-state" event_type: "ORDER_PAID" biz_key: "{order_id}" target_state: "OrderState.PAID" };
  string order_id = 1;
  OrderState state = 2;
}
message OrderCancelled {
  option (msgcontract.v1.event) = { topic: "order-state" event_type: "ORDER_CANCELLED" biz_key: "{order_id}" target_state: "OrderState.CANCELLED" };
  string order_id = 1;
  OrderState state = 2;
}
`

const mixedStatesProto = `syntax = "proto3";
package shop.mixed.v1;
import "msgcontract/v1/options.proto";
enum OrderState {
  option (msgcontract.v1.state_machine) = {};
  ORDER_STATE_UNSPECIFIED = 0;
  PAYING = 1;
  PAID = 2 [(msgcontract.v1.transition) = { from: ["PAYING"] }];
}
message OrderPaid {
  option (msgcontract.v1.event) = { topic: "order-mixed" event_type: "ORDER_PAID" biz_key: "{seq}" target_state: "OrderState.PAID" };
  int64 seq = 1;
  OrderState state = 2;
}
message OrderPaidAgain {
  option (msgcontract.v1.event) = { topic: "order-mixed" event_type: "ORDER_PAID_AGAIN" biz_key: "{seq}" target_state: "OrderState.PAID" };
  int64 seq = 1;
  OrderState status = 2;
}
`

// TestRegistryPushAttachesContractRules pushes contracts to a registry and
// reads back, from the latest version, the rules and metadata push
// derived from them.
func TestRegistryPushAttachesContractRules(t *testing.T) {
	t.Parallel()
	st, err := store.Open(filepath.Join(t.TempDir(), "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := api.New(api.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &client.Client{URL: ts.URL}
	nestedDir := t.TempDir()
	for file, text := range map[string]string{
		"shop/nested/v1/nested.proto": nestedProto,
		"shop/states/v1/states.proto": statesProto,
		"shop/mixed/v1/mixed.proto":   mixedStatesProto,
	} {
		path := filepath.Join(nestedDir, filepath.FromSlash(file))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type rule struct{ Name, Expr string }
	for _, tc := range []struct {
		subject, dir, file string
		rules              []rule
		props              map[string]string
	}{
		{
			subject: "inventory-event-value", dir: examplesDir, file: "shop/inventory/v1/inventory.proto",
			rules: []rule{{"msgcontract-bizkey-order_id", "message.order_id != ''"}, {"msgcontract-bizkey-sku", "message.sku != ''"}},
			props: map[string]string{
				"msgcontract.events": "shop.inventory.v1.StockDeducted",
				"msgcontract.event.shop.inventory.v1.StockDeducted.topic":      "inventory-event",
				"msgcontract.event.shop.inventory.v1.StockDeducted.event_type": "STOCK_DEDUCTED",
				"msgcontract.event.shop.inventory.v1.StockDeducted.biz_key":    "order_id:{order_id}:sku:{sku}",
				"msgcontract.event.shop.inventory.v1.StockDeducted.retry":      "base 200ms x1.5 jitter 100ms max 5000ms retries 8 (event)",
			},
		},
		{
			subject: "payment-value", dir: examplesDir, file: "shop/payment/v1/payment.proto",
			// refund_id is not in PaySuccess: a rule on it would fail every PaySuccess.
			rules: []rule{{"msgcontract-bizkey-order_id", "message.order_id != ''"}},
			props: map[string]string{
				"msgcontract.bizkey.unenforced": "refund_id",
				"msgcontract.events":            "shop.payment.v1.PaySuccess,shop.payment.v1.RefundRequested,shop.payment.v1.RefundSuccess",
			},
		},
		{
			subject: "orders-value", dir: nestedDir, file: "shop/nested/v1/nested.proto",
			rules: []rule{{"msgcontract-bizkey-customer-id", "has(message.customer) && message.customer.id != ''"}},
			props: map[string]string{"msgcontract.bizkey.unenforced": "coupon,reason"},
		},
		{
			// Every event's state field holds one of the file's target states.
			subject: "order-state-value", dir: nestedDir, file: "shop/states/v1/states.proto",
			rules: []rule{{"msgcontract-bizkey-order_id", "message.order_id != ''"}, {"msgcontract-state-state", "message.state in [2, 3]"}},
			props: map[string]string{"msgcontract.event.shop.states.v1.OrderCancelled.target_state": "CANCELLED"},
		},
		{
			// State fields of different names: no rule fits every record.
			subject: "order-mixed-value", dir: nestedDir, file: "shop/mixed/v1/mixed.proto",
			rules: []rule{},
			props: map[string]string{"msgcontract.state.unenforced": "state,status"},
		},
	} {
		args := []string{"registry", "push", "--url", ts.URL, "--subject", tc.subject, "-I", tc.dir, filepath.Join(tc.dir, filepath.FromSlash(tc.file))}
		for range 2 { // the same contract again is the same version
			if code, stdout, stderr := run(t, args...); code != 0 || !strings.Contains(stdout, "version 1,") {
				t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
			}
		}
		md, rs, err := c.Contract(context.Background(), tc.subject, subjectref.Latest)
		if err != nil {
			t.Fatal(err)
		}
		got := []rule{}
		if rs == nil { // none at all
			rs = &datacontract.RuleSet{}
		}
		for _, r := range rs.DomainRules {
			if r.Kind != datacontract.KindCondition || r.Mode != datacontract.ModeWrite || r.Type != "CEL" || r.OnFailure != datacontract.ActionError {
				t.Errorf("%s: rule %+v is not a CEL CONDITION on WRITE failing with ERROR", tc.subject, r)
			}
			got = append(got, rule{r.Name, r.Expr})
		}
		if g, w := jsonOf(got), jsonOf(tc.rules); g != w {
			t.Errorf("%s: rules %s, want %s", tc.subject, g, w)
		}
		for k, want := range tc.props {
			if md.Properties[k] != want {
				t.Errorf("%s: property %s = %q, want %q", tc.subject, k, md.Properties[k], want)
			}
		}
	}
	// Payment's error ranges, as the file declares them.
	md, _, err := c.Contract(context.Background(), "payment-value", subjectref.Latest)
	if err != nil {
		t.Fatal(err)
	}
	if r := md.Properties["msgcontract.error_ranges"]; !strings.Contains(r, "retryable") {
		t.Errorf("error ranges %q", r)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
