package python

import "testing"

func TestSnake(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"PaySuccess", "pay_success"}, {"HTTPRequest", "http_request"}, {"Order_Item", "order_item"},
		{"V2Event", "v2_event"}, {"stock", "stock"},
	} {
		if got := snake(tc.in); got != tc.want {
			t.Errorf("snake(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNamesAndLiterals(t *testing.T) {
	t.Parallel()
	if got := attr("m", "from"); got != `getattr(m, "from")` {
		t.Errorf("attr(from) = %s", got)
	}
	if got := attr("m", "order_id"); got != "m.order_id" {
		t.Errorf("attr(order_id) = %s", got)
	}
	if got := ModulePath("a-b/c-d.proto"); got != "a_b.c_d" {
		t.Errorf("ModulePath = %s", got)
	}
	if got, lib := pbImport("x/import/y.proto"); got != "_pb: Any = importlib.import_module(\"x.import.y_pb2\")" || !lib {
		t.Errorf("pbImport = %s, %v", got, lib)
	}
	if got, lib := pbImport("x/y.proto"); got != "from x import y_pb2 as _pb" || lib {
		t.Errorf("pbImport = %s, %v", got, lib)
	}
	if got := String("é😀\x01\""); got != `"\u00e9\U0001f600\x01\""` {
		t.Errorf("String = %s", got)
	}
	if got := Float(2); got != "2.0" {
		t.Errorf("Float(2) = %s", got)
	}
}
