package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
)

// normBase imports two files and sets several options, so that the
// spellings below can reorder them.
const normBase = `syntax = "proto3";
package shop.norm.v1;
import "google/protobuf/timestamp.proto";
import "msgcontract/v1/options.proto";
option go_package = "example.com/shop/norm/v1";
option java_package = "com.example.shop.norm.v1";
// Paid is sent once an order is paid.
message Paid {
  option (msgcontract.v1.event) = { topic: "pay" event_type: "PAID" biz_key: "order:{order_id}" };
  string order_id = 1 [json_name = "orderId", deprecated = true];
  google.protobuf.Timestamp at = 2;
}
`

// normSpellings are normBase written differently; normalize=true makes
// each one the same schema.
var normSpellings = map[string]string{
	"imports reordered": strings.Replace(normBase,
		"import \"google/protobuf/timestamp.proto\";\nimport \"msgcontract/v1/options.proto\";",
		"import \"msgcontract/v1/options.proto\";\nimport \"google/protobuf/timestamp.proto\";", 1),
	"file options reordered": strings.Replace(normBase,
		"option go_package = \"example.com/shop/norm/v1\";\noption java_package = \"com.example.shop.norm.v1\";",
		"option java_package = \"com.example.shop.norm.v1\";\noption go_package = \"example.com/shop/norm/v1\";", 1),
	"field options reordered": strings.Replace(normBase,
		`[json_name = "orderId", deprecated = true]`, `[deprecated = true, json_name = "orderId"]`, 1),
	"custom option fields reordered": strings.Replace(normBase,
		`topic: "pay" event_type: "PAID" biz_key: "order:{order_id}"`, `biz_key: "order:{order_id}", topic: "pay", event_type: "PAID"`, 1),
	"comments and layout": strings.NewReplacer("// Paid is sent once an order is paid.\n", "",
		"\n  ", " ", "google.protobuf.Timestamp", ".google.protobuf.Timestamp").Replace(normBase),
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	idOf := func(r response) float64 {
		t.Helper()
		var v struct{ ID float64 }
		if err := json.Unmarshal(r.body, &v); err != nil || v.ID == 0 {
			t.Fatalf("no id in %s", r.body)
		}
		return v.ID
	}
	base := idOf(c.expect("POST", "/subjects/norm-base/versions?normalize=true", reg(normBase), 200, 0))
	canonical := string(c.expect("GET", "/subjects/norm-base/versions/1/schema", nil, 200, 0).body)
	if canonical == normBase || strings.Contains(canonical, "//") {
		t.Fatalf("normalize=true stored the text as sent, not its canonical form:\n%s", canonical)
	}
	i := 0
	for name, text := range normSpellings {
		t.Run(name, func(t *testing.T) {
			if text == normBase {
				t.Fatal("the spelling changes nothing; fix the test")
			}
			// In the base's subject: the same id and version, no new version.
			if id := idOf(c.expect("POST", "/subjects/norm-base/versions?normalize=true", reg(text), 200, 0)); id != base {
				t.Fatalf("registered as id %v, want %v", id, base)
			}
			if got := string(c.expect("GET", "/subjects/norm-base/versions", nil, 200, 0).body); got != "[1]" {
				t.Fatalf("versions %s, want [1]", got)
			}
			found := c.expect("POST", "/subjects/norm-base?normalize=true", reg(text), 200, 0).json(t).(map[string]any)
			if found["id"] != base || found["version"] != 1.0 || found["schema"] != canonical {
				t.Fatalf("lookup: %v", found)
			}
			ok := c.expect("POST", "/compatibility/subjects/norm-base/versions/latest?normalize=true", reg(text), 200, 0).json(t).(map[string]any)
			if ok["is_compatible"] != true {
				t.Fatalf("compatibility: %v", ok)
			}
			// In a subject of its own: ids are global, so the same id.
			i++
			sub := fmt.Sprintf("/subjects/norm-%d", i)
			if id := idOf(c.expect("POST", sub+"/versions?normalize=true", reg(text), 200, 0)); id != base {
				t.Fatalf("in a new subject: id %v, want %v", id, base)
			}
			if got := string(c.expect("GET", sub+"/versions/1/schema", nil, 200, 0).body); got != canonical {
				t.Fatalf("stored text differs from the canonical one:\n%s", got)
			}
		})
	}
	// Without the flag nothing changes: the text is stored as sent, under
	// an id of its own.
	plain := normSpellings["imports reordered"]
	if id := idOf(c.expect("POST", "/subjects/norm-plain/versions", reg(plain), 200, 0)); id == base {
		t.Fatalf("without normalize=true the reordered imports got the canonical id %v", id)
	}
	if got := string(c.expect("GET", "/subjects/norm-plain/versions/1/schema", nil, 200, 0).body); got != plain {
		t.Fatalf("without normalize=true the stored text changed:\n%s", got)
	}
	// A real change is a new schema: a new id and a new version.
	changed := strings.Replace(normBase, "google.protobuf.Timestamp at = 2;", "google.protobuf.Timestamp at = 2;\n  string note = 3;", 1)
	if id := idOf(c.expect("POST", "/subjects/norm-base/versions?normalize=true", reg(changed), 200, 0)); id == base {
		t.Fatal("an added field was given the old id")
	}
	if got := string(c.expect("GET", "/subjects/norm-base/versions", nil, 200, 0).body); got != "[1,2]" {
		t.Fatalf("versions %s, want [1,2]", got)
	}
	c.expect("POST", "/subjects/norm-base?normalize=true", reg(strings.Replace(changed, "string note", "int64 note", 1)), 404, 40403)
	// normalize=true on a schema that does not compile is still a 422.
	c.expect("POST", "/subjects/norm-base/versions?normalize=true", reg("syntax = \"proto3\"; message {"), 422, 42201)
}
