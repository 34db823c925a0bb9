package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
)

func TestListingsAndFilters(t *testing.T) {
	c := newServer(t, api.Config{})
	for _, s := range []string{"app-a", "app-b", "other"} {
		c.expect("POST", "/subjects/"+s+"/versions", reg(v1), 200, 0)
		c.expect("POST", "/subjects/"+s+"/versions", reg(v2), 200, 0)
	}
	c.expect("DELETE", "/subjects/other", nil, 200, 0)
	c.expect("DELETE", "/subjects/app-a/versions/1", nil, 200, 0)
	list := func(path string) string {
		t.Helper()
		var v any
		if err := json.Unmarshal(c.expect("GET", path, nil, 200, 0).body, &v); err != nil {
			t.Fatal(err)
		}
		if items, ok := v.([]any); ok && len(items) > 0 {
			if _, isObj := items[0].(map[string]any); isObj {
				var parts []string
				for _, it := range items {
					m := it.(map[string]any)
					b, _ := json.Marshal([]any{m["subject"], m["version"]})
					parts = append(parts, string(b))
				}
				return strings.Join(parts, " ")
			}
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	for _, tc := range []struct{ path, want string }{
		{"/subjects", `["app-a","app-b"]`},
		{"/subjects?deleted=true", `["app-a","app-b","other"]`},
		{"/subjects?deletedOnly=true", `["other"]`},
		{"/subjects?subjectPrefix=app-&limit=1&offset=1", `["app-b"]`},
		{"/subjects/app-a/versions", `[2]`},
		{"/subjects/app-a/versions?deletedOnly=true", `[1]`},
		{"/schemas?subjectPrefix=app-", `["app-a",2] ["app-b",1] ["app-b",2]`},
		{"/schemas?subjectPrefix=app-&latestOnly=true", `["app-a",2] ["app-b",2]`},
		{"/schemas?deleted=true&offset=4&limit=10", `["other",1] ["other",2]`},
		{"/contexts", `["."]`},
	} {
		if got := list(tc.path); got != tc.want {
			t.Errorf("GET %s = %s, want %s", tc.path, got, tc.want)
		}
	}
	c.expect("GET", "/subjects?limit=x", nil, 422, api.CodeInvalidVersion)
	// Lookup finds a soft-deleted version only with deleted=true.
	c.expect("POST", "/subjects/app-a", reg(v1), 404, api.CodeSchemaNotFound)
	c.expect("POST", "/subjects/app-a?deleted=true", reg(v1), 200, 0)
}

// TestVerboseListsEveryVersion: a change breaking every earlier version is
// reported against each of them in a verbose check, as Confluent does.
func TestVerboseListsEveryVersion(t *testing.T) {
	c := newServer(t, api.Config{})
	c.expect("PUT", "/config/s", map[string]string{"compatibility": "FULL_TRANSITIVE"}, 200, 0)
	c.expect("POST", "/subjects/s/versions", reg(v1), 200, 0)
	c.expect("POST", "/subjects/s/versions", reg(v2), 200, 0)
	got := c.expect("POST", "/compatibility/subjects/s/versions?verbose=true", reg(newKey), 200, 0).json(t).(map[string]any)
	msgs, _ := json.Marshal(got["messages"])
	for _, want := range []string{"EVENT_BIZ_KEY_CHANGED", "(against version 1)", "(against version 2)"} {
		if !strings.Contains(string(msgs), want) {
			t.Errorf("verbose messages lack %q: %s", want, msgs)
		}
	}
}
