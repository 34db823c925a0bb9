package console_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestCheckFollowsReferences: the check form and the diff compare what
// the referenced versions define, as the registry does: main's text is
// unchanged, but its reference now names a dep whose Hint.s changed type.
func TestCheckFollowsReferences(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const dep = "syntax = \"proto3\";\npackage dep;\nmessage Hint { string s = 1; }\n"
	const mainText = "syntax = \"proto3\";\npackage app;\nimport \"dep.proto\";\nmessage Main { dep.Hint hint = 1; }\n"
	f.register(t, "dep", dep)
	req, _ := http.NewRequest(http.MethodPut, f.URL+"/config/dep", bytes.NewReader([]byte(`{"compatibility": "NONE"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /config/dep: %v %v", err, resp)
	}
	resp.Body.Close()
	f.register(t, "dep", strings.Replace(dep, "string s = 1;", "int32 s = 1;", 1))
	status, body := post(t, f.URL+"/ui/check", "", url.Values{"subject": {"main"}, "schema": {mainText}, "refs": {"dep.proto dep 1"}})
	if status != http.StatusOK {
		t.Fatalf("check main v1: HTTP %d\n%.500s", status, body)
	}
	status, body = post(t, f.URL+"/ui/register", "", url.Values{"subject": {"main"}, "schema": {mainText}, "refs": {"dep.proto dep 1"}, "confirm": {"yes"}, "token": {token}})
	if status != http.StatusSeeOther {
		t.Fatalf("register main v1: HTTP %d\n%.500s", status, body)
	}
	status, body = post(t, f.URL+"/ui/check", "", url.Values{"subject": {"main"}, "schema": {mainText}, "refs": {"dep.proto dep 2"}})
	if !strings.Contains(body, "dep.Hint.s") {
		t.Errorf("check against dep v2: HTTP %d, no violation names dep.Hint.s\n%.3000s", status, body[max(0, strings.Index(body, "<main")):])
	}
}
