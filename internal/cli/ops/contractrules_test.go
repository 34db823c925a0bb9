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
	nested := filepath.Join(nestedDir, "shop", "nested", "v1", "nested.proto")
	if err := os.MkdirAll(filepath.Dir(nested), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nested, []byte(nestedProto), 0o644); err != nil {
		t.Fatal(err)
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
		var got []rule
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
