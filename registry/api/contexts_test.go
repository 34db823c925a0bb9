package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

func TestContexts(t *testing.T) {
	t.Parallel()
	testContexts(t, newServer(t, api.Config{}))
}

func TestContextsPostgres(t *testing.T) {
	t.Parallel()
	testContexts(t, newPostgresServer(t, api.Config{}))
}

func testContexts(t *testing.T, c *client) {
	id := func(path, text string, refs ...subjectref.Reference) float64 {
		t.Helper()
		var v struct{ ID float64 }
		if err := json.Unmarshal(c.expect("POST", path, reg(text, refs...), 200, 0).body, &v); err != nil || v.ID == 0 {
			t.Fatalf("%s: no id", path)
		}
		return v.ID
	}
	get := func(path string) string {
		t.Helper()
		return string(c.expect("GET", path, nil, 200, 0).body)
	}
	c.expect("GET", "/contexts", nil, 200, 0)
	if got := get("/contexts"); got != `["."]` {
		t.Fatalf("contexts of an empty registry: %s", got)
	}
	plain := id("/subjects/pay/versions", v1)
	inCtx := id("/subjects/:.ctx:pay/versions", v1)
	other := id("/subjects/:.other:pay/versions", v1)
	// Each context is a registry of its own: one schema has a different
	// id in each, and one id within one.
	if plain == inCtx || inCtx == other || plain == other {
		t.Fatalf("ids %v %v %v: one schema shares an id across contexts", plain, inCtx, other)
	}
	if again := id("/subjects/:.ctx:pay2/versions", v1); again != inCtx {
		t.Fatalf("same schema in another subject of .ctx: id %v, want %v", again, inCtx)
	}
	if again := id("/subjects/pay2/versions", v1); again != plain {
		t.Fatalf("same schema in another subject of the default context: id %v, want %v", again, plain)
	}
	// ":.:name" is name in the default context.
	if again := id("/subjects/:.:pay/versions", v1); again != plain {
		t.Fatalf(":.:pay is pay: id %v, want %v", again, plain)
	}
	for _, tc := range []struct{ path, want string }{
		{"/contexts", `[".",".ctx",".other"]`},
		{"/subjects", `[":.ctx:pay",":.ctx:pay2",":.other:pay","pay","pay2"]`},
		{"/subjects?subjectPrefix=:.ctx:", `[":.ctx:pay",":.ctx:pay2"]`},
		{"/subjects?subjectPrefix=", `["pay","pay2"]`},
		{"/subjects/:.ctx:pay/versions", `[1]`},
		{"/subjects/:.:pay/versions", `[1]`},
		{fmt.Sprintf("/schemas/ids/%v/subjects", inCtx), `[":.ctx:pay",":.ctx:pay2"]`},
		{fmt.Sprintf("/schemas/ids/%v/subjects", plain), `["pay","pay2"]`},
	} {
		if got := get(tc.path); got != tc.want {
			t.Errorf("GET %s = %s, want %s", tc.path, got, tc.want)
		}
	}
	// Look-up finds the version in the subject's context, with its id.
	found := c.expect("POST", "/subjects/:.ctx:pay", reg(v1), 200, 0).json(t).(map[string]any)
	if found["id"] != inCtx || found["subject"] != ":.ctx:pay" || found["version"] != 1.0 {
		t.Fatalf("lookup in .ctx: %v", found)
	}
	c.expect("POST", "/subjects/:.none:pay", reg(v1), 404, 40401)
	// Versions, levels and checks are per subject, in any context.
	c.expect("POST", "/subjects/:.ctx:pay/versions", reg(deleted), 409, 0)
	c.expect("PUT", "/config/:.ctx:pay", map[string]string{"compatibility": "NONE"}, 200, 0)
	c.expect("POST", "/subjects/:.ctx:pay/versions", reg(deleted), 200, 0)
	if got := get("/subjects/:.ctx:pay/versions"); got != `[1,2]` {
		t.Fatalf(".ctx versions: %s", got)
	}
	if got := get("/subjects/pay/versions"); got != `[1]` {
		t.Fatalf("default-context pay changed with :.ctx:pay: %s", got)
	}
	c.expect("POST", "/subjects/pay/versions", reg(deleted), 409, 0)
	// A reference's subject is read in the referring subject's context:
	// "money" from :.ctx:order is :.ctx:money, whose Cents the default
	// context's money lacks; ":.:money" names the default one.
	const moneyPath = "shop/common/v1/money.proto"
	money := "syntax = \"proto3\";\npackage shop.common.v1;\nmessage Money { int64 cents = 1; }\n"
	ctxMoney := money + "message Cents { int64 n = 1; }\n"
	order := "syntax = \"proto3\";\npackage shop.order.v1;\nimport \"shop/common/v1/money.proto\";\nmessage Order { shop.common.v1.Cents total = 1; }\n"
	order2 := strings.Replace(order, "Cents total", "Money total", 1)
	id("/subjects/money/versions", money)
	id("/subjects/:.ctx:money/versions", ctxMoney)
	byCtx := id("/subjects/:.ctx:order/versions", order, subjectref.Reference{Name: moneyPath, Subject: "money", Version: -1})
	c.expect("POST", "/subjects/order/versions", reg(order, subjectref.Reference{Name: moneyPath, Subject: "money", Version: 1}), 422, api.CodeInvalidSchema)
	byDefault := id("/subjects/:.ctx:order2/versions", order2, subjectref.Reference{Name: moneyPath, Subject: ":.:money", Version: 1})
	stored := c.expect("GET", "/subjects/:.ctx:order/versions/1", nil, 200, 0).json(t).(map[string]any)
	if r := stored["references"].([]any)[0].(map[string]any); r["subject"] != "money" || r["version"] != 1.0 {
		t.Fatalf("reference stored as %v, want as sent, pinned to version 1", r)
	}
	for path, want := range map[string]float64{
		"/subjects/:.ctx:money/versions/1/referencedby": byCtx,
		"/subjects/money/versions/1/referencedby":       byDefault,
	} {
		if got := get(path); got != fmt.Sprintf("[%v]", want) {
			t.Errorf("GET %s = %s, want [%v]", path, got, want)
		}
	}
	c.expect("DELETE", "/subjects/:.ctx:money", nil, 422, api.CodeReferenceExists)
	c.expect("DELETE", "/subjects/:.ctx:order2", nil, 200, 0)
	c.expect("DELETE", "/subjects/money/versions/1", nil, 200, 0)
	// A context's own level and mode (/config/:.ctx:, /mode/:.ctx:) apply
	// to its subjects without one of their own, and to no other context.
	c.expect("PUT", "/config/:.other:", map[string]string{"compatibility": "NONE"}, 200, 0)
	c.expect("POST", "/subjects/:.other:pay/versions", reg(deleted), 200, 0)
	c.expect("POST", "/subjects/:.ctx:pay2/versions", reg(deleted), 409, 0)
	c.expect("PUT", "/mode/:.other:", map[string]string{"mode": "READONLY"}, 200, 0)
	c.expect("POST", "/subjects/:.other:pay/versions", reg(v2), 422, api.CodeOperationNotAllowed)
	c.expect("POST", "/subjects/:.ctx:pay2/versions", reg(v2), 200, 0)
	for path, want := range map[string]string{
		"/config/:.other:pay?defaultToGlobal=true": `{"compatibilityLevel":"NONE"}`,
		"/config/:.ctx:pay2?defaultToGlobal=true":  `{"compatibilityLevel":"BACKWARD"}`,
		"/mode/:.other:pay?defaultToGlobal=true":   `{"mode":"READONLY"}`,
		"/mode/:.ctx:pay2?defaultToGlobal=true":    `{"mode":"READWRITE"}`,
	} {
		if got := get(path); got != want {
			t.Errorf("GET %s = %s, want %s", path, got, want)
		}
	}
	c.expect("PUT", "/mode/:.other:pay", map[string]string{"mode": "READWRITE"}, 200, 0)
	c.expect("POST", "/subjects/:.other:pay/versions", reg(v2), 200, 0)
	// Malformed qualified names are refused with Confluent's 42208.
	c.expect("POST", "/subjects/:.ctx:/versions", reg(v1), 422, 42208)
	c.expect("POST", "/subjects/:.nocolon/versions", reg(v1), 422, 42208)
}
