package python_test

import (
	"context"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/codegen/python"
)

// TestCheckModuleCollisions: protoc turns "-" in a file name into "_", so
// shop/order-v1.proto and shop/order_v1.proto are both the module
// shop.order_v1: their _pb2 and _msgcontract modules would be written
// over each other. The later contract file is PYTHON_MODULE_COLLISION,
// naming the other; distinct modules are no finding.
func TestCheckModuleCollisions(t *testing.T) {
	t.Parallel()
	src := func(pkg, msg string) string {
		return "syntax = \"proto3\";\npackage " + pkg + ";\nimport \"msgcontract/v1/options.proto\";\nmessage " + msg +
			" {\n  option (msgcontract.v1.event) = { topic: \"t\" event_type: \"E\" biz_key: \"{id}\" };\n  string id = 1;\n}\n"
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string // "pos: message substrings joined by |", "" for none
	}{
		{"hyphen and underscore", map[string]string{"shop/order-v1.proto": src("a", "Placed"), "shop/order_v1.proto": src("b", "Placed")},
			"shop/order_v1.proto:1:1: shop.order_v1|shop/order-v1.proto|shop/order_v1_msgcontract.py|rename"},
		{"distinct modules", map[string]string{"shop/order-v1.proto": src("a", "Placed"), "shop/order_v2.proto": src("b", "Placed")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var names []string
			for name := range tc.files {
				names = append(names, name)
			}
			if len(names) == 2 && names[0] > names[1] {
				names[0], names[1] = names[1], names[0]
			}
			set, err := model.Load(context.Background(), model.Config{Sources: tc.files}, names...)
			if err != nil {
				t.Fatal(err)
			}
			var got model.Diagnostics
			for _, d := range python.Check(set) {
				if d.Rule == "PYTHON_MODULE_COLLISION" {
					got = append(got, d)
				}
			}
			if tc.want == "" {
				if len(got) > 0 {
					t.Fatalf("findings, want none:\n%v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d findings, want 1:\n%v", len(got), got)
			}
			pos, parts, _ := strings.Cut(tc.want, ": ")
			if got[0].Pos.String() != pos {
				t.Errorf("finding at %s, want %s", got[0].Pos, pos)
			}
			for _, p := range strings.Split(parts, "|") {
				if !strings.Contains(got[0].Message, p) {
					t.Errorf("finding %q lacks %q", got[0].Message, p)
				}
			}
		})
	}
}
