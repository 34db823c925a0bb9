package api_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
)

func TestModes(t *testing.T) { testModes(t, newServer(t, api.Config{})) }

// TestModesPostgres covers IMPORT's explicit ids on PostgreSQL, whose id
// sequence must move past them.
func TestModesPostgres(t *testing.T) { testModes(t, newPostgresServer(t, api.Config{})) }

func testModes(t *testing.T, c *client) {
	c.expect("GET", "/mode", nil, 200, 0)
	c.expect("GET", "/mode/s", nil, 404, api.CodeModeNotFound)
	if m := c.expect("GET", "/mode/s?defaultToGlobal=true", nil, 200, 0).json(t).(map[string]any)["mode"]; m != "READWRITE" {
		t.Fatalf("default mode %v", m)
	}
	c.expect("PUT", "/mode", map[string]string{"mode": "SIDEWAYS"}, 422, api.CodeInvalidMode)

	// READONLY refuses registrations and deletes, not reads.
	c.expect("POST", "/subjects/s/versions", reg(v1), 200, 0)
	c.expect("PUT", "/mode/s", map[string]string{"mode": "READONLY"}, 200, 0)
	c.expect("POST", "/subjects/s/versions", reg(v2), 422, api.CodeOperationNotAllowed)
	c.expect("DELETE", "/subjects/s", nil, 422, api.CodeOperationNotAllowed)
	c.expect("GET", "/subjects/s/versions/1", nil, 200, 0)
	c.expect("POST", "/subjects/other/versions", reg(v1), 200, 0) // another subject is not read-only
	c.expect("PUT", "/mode", map[string]string{"mode": "READONLY"}, 200, 0)
	c.expect("POST", "/subjects/other/versions", reg(v2), 422, api.CodeOperationNotAllowed)
	c.expect("PUT", "/mode", map[string]string{"mode": "READWRITE"}, 200, 0)
	c.expect("DELETE", "/mode/s", nil, 200, 0)
	c.expect("POST", "/subjects/s/versions", reg(v2), 200, 0)

	// IMPORT needs an empty registry (or force), keeps ids and versions,
	// and skips the compatibility check.
	c.expect("PUT", "/mode", map[string]string{"mode": "IMPORT"}, 422, api.CodeOperationNotAllowed)
	withID := func(text string, id, version int) map[string]any {
		// Ids are content-addressed here: the same text already has id 1.
		m := reg(strings.ReplaceAll(text, "shop.pay.v1", "shop.imported.v1"))
		m["id"], m["version"] = id, version
		return m
	}
	c.expect("POST", "/subjects/imported/versions", withID(v1, 100, 7), 422, api.CodeOperationNotAllowed)
	c.expect("PUT", "/mode/imported", map[string]string{"mode": "IMPORT"}, 200, 0)
	if got := string(c.expect("POST", "/subjects/imported/versions", withID(v1, 100, 7), 200, 0).body); got != `{"id":100}` {
		t.Fatalf("import answered %s", got)
	}
	c.expect("POST", "/subjects/imported/versions", withID(v1, 100, 7), 200, 0)                         // idempotent
	c.expect("POST", "/subjects/imported/versions", withID(v1, 5, 9), 422, api.CodeOperationNotAllowed) // content has id 100
	c.expect("POST", "/subjects/imported/versions", withID(deleted, 100, 8), 422, api.CodeOperationNotAllowed)
	c.expect("POST", "/subjects/imported/versions", withID(deleted, 101, 8), 200, 0) // breaking, but imported
	c.expect("GET", "/subjects/imported/versions/7", nil, 200, 0)
	c.expect("DELETE", "/mode/imported", nil, 200, 0)
	// Fresh registrations get ids past the imported ones.
	if id := c.expect("POST", "/subjects/fresh/versions", reg(newKey), 200, 0).json(t).(map[string]any)["id"].(float64); id <= 101 {
		t.Fatalf("a new schema after an import got id %v, which may collide", id)
	}
}

func TestRefusedInput(t *testing.T) {
	c := newServer(t, api.Config{})
	withField := func(k string, v any) map[string]any {
		m := reg(v1)
		m[k] = v
		return m
	}
	// Data contracts are stored (contract_test.go); an invalid rule set is 42210.
	c.expect("POST", "/subjects/s/versions", withField("ruleSet", map[string]any{"domainRules": []any{map[string]any{"name": "r", "kind": "SOMETIMES", "type": "CEL"}}}), 422, api.CodeInvalidRuleSet)
	c.expect("POST", "/subjects/s/versions", withField("metadata", nil), 200, 0)
	for _, bad := range []string{"a\x00b", "line\nbreak", "\xff\xfe", strings.Repeat("x", 256), ":.ctx:", ":.no-colon"} {
		c.expect("POST", "/subjects/"+url.PathEscape(bad)+"/versions", reg(v1), 422, api.CodeInvalidSubject)
	}
}
