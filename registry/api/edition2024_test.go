package api_test

import (
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
)

// ed2024 is an edition-2024 contract: msgcontract's options through an
// option import, an exported event, a local helper message.
const ed2024 = `edition = "2024";
package shop.pay.v1;
import option "msgcontract/v1/options.proto";
local message Money {
  int64 units = 1;
}
export message Paid {
  option (msgcontract.v1.event) = { topic: "pay" event_type: "PAID" biz_key: "order:{order_id}" };
  string order_id = 1;
  Money amount = 2;
}
`

// The registry takes edition-2024 schemas and checks their features as it
// checks proto2 and proto3: a delimited encoding is a changed wire type, a
// changed biz_key a contract break, an added field compatible; a file
// breaking 2024's own rules (naming style) is not a valid schema.
func TestEdition2024Schemas(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	if got := string(c.expect("POST", "/subjects/pay-value/versions", reg(ed2024), 200, 0).body); got != `{"id":1}` {
		t.Fatalf("register: %s", got)
	}
	if got := c.expect("GET", "/schemas/ids/1", nil, 200, 0).json(t).(map[string]any)["schema"]; got != ed2024 {
		t.Errorf("schema 1 reads back as %q", got)
	}
	added := strings.Replace(ed2024, "  Money amount = 2;\n", "  Money amount = 2;\n  string currency = 3;\n", 1)
	delimited := strings.Replace(ed2024, "Money amount = 2;", "Money amount = 2 [features.message_encoding = DELIMITED];", 1)
	rekeyed := strings.Replace(ed2024, "order:{order_id}", "paid:{order_id}", 1)
	for _, tc := range []struct {
		name, text string
		ok         bool
		says       string
	}{
		{"added field", added, true, ""},
		{"delimited encoding", delimited, false, "FIELD_TYPE_CHANGED"},
		{"changed biz_key", rekeyed, false, "BIZ_KEY"},
	} {
		r := c.expect("POST", "/compatibility/subjects/pay-value/versions/latest?verbose=true", reg(tc.text), 200, 0)
		got := r.json(t).(map[string]any)
		if got["is_compatible"] != tc.ok || !strings.Contains(string(r.body), tc.says) {
			t.Errorf("%s: %s; want is_compatible %v naming %q", tc.name, r.body, tc.ok, tc.says)
		}
	}
	badName := strings.Replace(ed2024, "string order_id = 1;", "string orderId = 1;", 1)
	r := c.expect("POST", "/subjects/pay-value/versions", reg(badName), 422, api.CodeInvalidSchema)
	if !strings.Contains(string(r.body), "order_id") {
		t.Errorf("a STYLE2024 violation should be named with the name to write: %s", r.body)
	}
}
