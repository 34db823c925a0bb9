package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/internal/pgtest"
	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

const v1 = `syntax = "proto3";
package shop.pay.v1;
import "msgcontract/v1/options.proto";
option (msgcontract.v1.defaults) = {
  error_ranges: [{ from: 40000 to: 49999 retryable: false name: "business" }]
};
message Paid {
  option (msgcontract.v1.event) = { topic: "pay" event_type: "PAID" biz_key: "order:{order_id}" };
  string order_id = 1;
  int64 amount = 2;
}
`

// v2 adds a field: compatible at every level.
var v2 = strings.Replace(v1, "int64 amount = 2;", "int64 amount = 2;\n  string currency = 3;", 1)

// newKey changes only the biz_key option: a new version, and breaking.
var newKey = strings.Replace(v1, "order:{order_id}", "order:{order_id}:paid", 1)

// deleted drops a field without reserving it: breaking on the wire.
var deleted = strings.Replace(v1, "  int64 amount = 2;\n", "", 1)

type client struct {
	t     *testing.T
	url   string
	token string
	// authorization, when set, is the Authorization header sent instead
	// of the bearer token.
	authorization string
}

func newServer(t *testing.T, cfg api.Config) *client {
	t.Helper()
	return &client{t: t, url: startTestServer(t, cfg), token: cfg.Token}
}

// newPostgresServer is newServer on a fresh PostgreSQL schema; it skips
// the test unless MSGCONTRACT_TEST_POSTGRES names a server.
func newPostgresServer(t *testing.T, cfg api.Config) *client {
	t.Helper()
	return &client{t: t, url: startTestServerOn(t, pgtest.DSN(t), cfg), token: cfg.Token}
}

// startTestServer serves a registry on a fresh SQLite store on loopback
// and returns its URL.
func startTestServer(tb testing.TB, cfg api.Config) string {
	tb.Helper()
	return startTestServerOn(tb, filepath.Join(tb.TempDir(), "registry.db"), cfg)
}

func startTestServerOn(tb testing.TB, dsn string, cfg api.Config) string {
	tb.Helper()
	st, err := store.Open(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	cfg.Store = st
	if cfg.Workers == nil {
		cfg.Workers = workers(tb)
	}
	srv, err := api.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	tb.Cleanup(ts.Close)
	return ts.URL
}

type response struct {
	status int
	body   []byte
	ctype  string
	header http.Header
}

func (r response) json(t *testing.T) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("response is not JSON: %v: %s", err, r.body)
	}
	return v
}

func (r response) code(t *testing.T) int {
	t.Helper()
	m, ok := r.json(t).(map[string]any)
	if !ok {
		return 0
	}
	c, _ := m["error_code"].(float64)
	return int(c)
}

func (c *client) do(method, path string, body any) response {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", api.ContentType)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.authorization != "" {
		req.Header.Set("Authorization", c.authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: b, ctype: resp.Header.Get("Content-Type"), header: resp.Header}
}

func reg(text string, refs ...subjectref.Reference) map[string]any {
	m := map[string]any{"schemaType": "PROTOBUF", "schema": text}
	if refs != nil {
		m["references"] = refs
	}
	return m
}

func (c *client) expect(method, path string, body any, status, code int) response {
	c.t.Helper()
	r := c.do(method, path, body)
	if r.status != status {
		c.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, r.body)
	}
	if code != 0 && r.code(c.t) != code {
		c.t.Fatalf("%s %s: error_code %d, want %d: %s", method, path, r.code(c.t), code, r.body)
	}
	return r
}

func TestEndpoints(t *testing.T) {
	t.Parallel()
	testEndpoints(t, newServer(t, api.Config{}))
}

func TestEndpointsPostgres(t *testing.T) {
	t.Parallel()
	testEndpoints(t, newPostgresServer(t, api.Config{}))
}

func testEndpoints(t *testing.T, c *client) {
	// Registration, re-registration and listing.
	r := c.expect("POST", "/subjects/pay-value/versions", reg(v1), 200, 0)
	if r.ctype != api.ContentType {
		t.Errorf("content type %q, want %q", r.ctype, api.ContentType)
	}
	if string(r.body) != `{"id":1}` {
		t.Fatalf("register: %s", r.body)
	}
	c.expect("POST", "/subjects/pay-value/versions", reg(v1), 200, 0)
	if got := string(c.expect("GET", "/subjects/pay-value/versions", nil, 200, 0).body); got != "[1]" {
		t.Fatalf("identical schema made a new version: %s", got)
	}
	if got := string(c.expect("POST", "/subjects/pay-value/versions", reg(v2), 200, 0).body); got != `{"id":2}` {
		t.Fatalf("v2: %s", got)
	}
	if got := string(c.expect("GET", "/subjects", nil, 200, 0).body); got != `["pay-value"]` {
		t.Fatalf("subjects: %s", got)
	}
	// Versions and schemas.
	got := c.expect("GET", "/subjects/pay-value/versions/latest", nil, 200, 0).json(t).(map[string]any)
	if got["version"] != 2.0 || got["id"] != 2.0 || got["schema"] != v2 || got["schemaType"] != "PROTOBUF" || got["subject"] != "pay-value" {
		t.Fatalf("latest: %v", got)
	}
	if b := c.expect("GET", "/subjects/pay-value/versions/1/schema", nil, 200, 0).body; string(b) != v1 {
		t.Fatalf("raw schema: %s", b)
	}
	byID := c.expect("GET", "/schemas/ids/1", nil, 200, 0).json(t).(map[string]any)
	if byID["schema"] != v1 {
		t.Fatalf("schema by id: %v", byID)
	}
	ser := c.expect("GET", "/schemas/ids/1?format=serialized", nil, 200, 0).json(t).(map[string]any)
	if _, err := base64.StdEncoding.DecodeString(ser["schema"].(string)); err != nil {
		t.Fatalf("format=serialized is not base64: %v", ser)
	}
	if b := c.expect("GET", "/schemas/ids/2/versions", nil, 200, 0).body; string(b) != `[{"subject":"pay-value","version":2}]` {
		t.Fatalf("id versions: %s", b)
	}
	if b := c.expect("GET", "/schemas/ids/2/subjects", nil, 200, 0).body; string(b) != `["pay-value"]` {
		t.Fatalf("id subjects: %s", b)
	}
	c.expect("GET", "/schemas/ids/99/subjects", nil, 404, api.CodeSchemaNotFound)
	if b := c.expect("GET", "/mode", nil, 200, 0).body; string(b) != `{"mode":"READWRITE"}` {
		t.Fatalf("mode: %s", b)
	}
	if b := c.expect("GET", "/schemas/types", nil, 200, 0).body; string(b) != `["PROTOBUF"]` {
		t.Fatalf("types: %s", b)
	}
	// Look up.
	look := c.expect("POST", "/subjects/pay-value", reg(v1), 200, 0).json(t).(map[string]any)
	if look["version"] != 1.0 || look["id"] != 1.0 {
		t.Fatalf("lookup: %v", look)
	}
	c.expect("POST", "/subjects/pay-value", reg(deleted), 404, api.CodeSchemaNotFound)
	c.expect("POST", "/subjects/nope", reg(v1), 404, api.CodeSubjectNotFound)
	// Compatibility.
	ok := c.expect("POST", "/compatibility/subjects/pay-value/versions/latest?verbose=true", reg(v2), 200, 0).json(t).(map[string]any)
	if ok["is_compatible"] != true {
		t.Fatalf("compatible: %v", ok)
	}
	bad := c.expect("POST", "/compatibility/subjects/pay-value/versions/1?verbose=true", reg(newKey), 200, 0).json(t).(map[string]any)
	msgs, _ := bad["messages"].([]any)
	if bad["is_compatible"] != false || len(msgs) != 1 || !strings.Contains(msgs[0].(string), "pay-value.proto:8:") || !strings.Contains(msgs[0].(string), "EVENT_BIZ_KEY_CHANGED") {
		t.Fatalf("incompatible: %v", bad)
	}
	quiet := c.expect("POST", "/compatibility/subjects/pay-value/versions", reg(deleted), 200, 0).json(t).(map[string]any)
	if quiet["is_compatible"] != false || quiet["messages"] != nil {
		t.Fatalf("non-verbose check: %v", quiet)
	}
	fresh := c.expect("POST", "/compatibility/subjects/fresh/versions", reg(v1), 200, 0).json(t).(map[string]any)
	if fresh["is_compatible"] != true {
		t.Fatalf("a subject without versions accepts anything: %v", fresh)
	}
	// As Confluent: a numbered version that does not exist is 40402, whether
	// or not the subject does.
	c.expect("POST", "/compatibility/subjects/nope/versions/1", reg(v1), 404, api.CodeVersionNotFound)
	c.expect("POST", "/compatibility/subjects/pay-value/versions/9", reg(v1), 404, api.CodeVersionNotFound)
	// Incompatible registration: HTTP 409 for old clients, 40901 for new.
	c.expect("POST", "/subjects/pay-value/versions", reg(newKey), 409, api.CodeIncompatible)
	// Config.
	if b := c.expect("GET", "/config", nil, 200, 0).body; string(b) != `{"compatibilityLevel":"BACKWARD"}` {
		t.Fatalf("default config: %s", b)
	}
	c.expect("GET", "/config/pay-value", nil, 404, api.CodeConfigNotFound)
	if b := c.expect("GET", "/config/pay-value?defaultToGlobal=true", nil, 200, 0).body; string(b) != `{"compatibilityLevel":"BACKWARD"}` {
		t.Fatalf("defaultToGlobal: %s", b)
	}
	c.expect("PUT", "/config/pay-value", map[string]string{"compatibility": "SIDEWAYS"}, 422, api.CodeInvalidLevel)
	if b := c.expect("PUT", "/config/pay-value", map[string]string{"compatibility": "NONE"}, 200, 0).body; string(b) != `{"compatibility":"NONE"}` {
		t.Fatalf("put config: %s", b)
	}
	// An options-only change is a new version, never merged.
	if got := string(c.expect("POST", "/subjects/pay-value/versions", reg(newKey), 200, 0).body); got != `{"id":3}` {
		t.Fatalf("options-only change: %s", got)
	}
	c.expect("DELETE", "/config/pay-value", nil, 200, 0)
	c.expect("DELETE", "/config/pay-value", nil, 404, api.CodeConfigNotFound)
	c.expect("PUT", "/config", map[string]string{"compatibility": "full_transitive"}, 200, 0)
	if b := c.expect("GET", "/config", nil, 200, 0).body; string(b) != `{"compatibilityLevel":"FULL_TRANSITIVE"}` {
		t.Fatalf("global config: %s", b)
	}
	c.expect("DELETE", "/config", nil, 200, 0)
	// Errors on reads.
	c.expect("GET", "/subjects/nope/versions", nil, 404, api.CodeSubjectNotFound)
	c.expect("GET", "/subjects/pay-value/versions/9", nil, 404, api.CodeVersionNotFound)
	c.expect("GET", "/subjects/pay-value/versions/zero", nil, 422, api.CodeInvalidVersion)
	c.expect("GET", "/subjects/pay-value/versions/0", nil, 422, api.CodeInvalidVersion)
	c.expect("GET", "/schemas/ids/99", nil, 404, api.CodeSchemaNotFound)
	c.expect("GET", "/schemas/ids/99/versions", nil, 404, api.CodeSchemaNotFound)
	c.expect("POST", "/subjects/pay-value/versions", reg("syntax = \"proto3\"; message {"), 422, api.CodeInvalidSchema)
	c.expect("POST", "/subjects/pay-value/versions", map[string]any{"schemaType": "AVRO", "schema": "{}"}, 422, api.CodeInvalidSchema)
	c.expect("POST", "/subjects/pay-value/versions", map[string]any{"schemaType": "PROTOBUF"}, 422, api.CodeInvalidSchema)
	if r := c.expect("POST", "/subjects/pay-value/versions", `{"schema": `, 400, api.CodeInvalidSchema); !strings.Contains(string(r.body), "not valid JSON") {
		t.Fatalf("malformed JSON: %s", r.body)
	}
	if r := c.expect("POST", "/subjects/pay-value/versions", `{"schema": 5}`, 400, api.CodeInvalidSchema); !strings.Contains(string(r.body), `field \"schema\"`) {
		t.Fatalf("mistyped JSON: %s", r.body)
	}
	c.expect("GET", "/no/such/endpoint", nil, 404, 404)
	// Deletes.
	c.expect("DELETE", "/subjects/pay-value/versions/1?permanent=true", nil, 404, api.CodeVersionNotSoftDeleted)
	if b := c.expect("DELETE", "/subjects/pay-value/versions/1", nil, 200, 0).body; string(b) != "1" {
		t.Fatalf("delete version: %s", b)
	}
	c.expect("DELETE", "/subjects/pay-value/versions/1", nil, 404, api.CodeVersionSoftDeleted)
	c.expect("GET", "/subjects/pay-value/versions/1", nil, 404, api.CodeVersionNotFound)
	c.expect("GET", "/subjects/pay-value/versions/1?deleted=true", nil, 200, 0)
	c.expect("DELETE", "/subjects/pay-value/versions/1?permanent=true", nil, 200, 0)
	c.expect("DELETE", "/subjects/pay-value/versions/9", nil, 404, api.CodeVersionNotFound)
	c.expect("DELETE", "/subjects/pay-value?permanent=true", nil, 404, api.CodeSubjectNotSoftDeleted)
	if b := c.expect("DELETE", "/subjects/pay-value", nil, 200, 0).body; string(b) != "[2,3]" {
		t.Fatalf("delete subject: %s", b)
	}
	c.expect("DELETE", "/subjects/pay-value", nil, 404, api.CodeSubjectSoftDeleted)
	if b := c.expect("GET", "/subjects?deleted=true", nil, 200, 0).body; string(b) != `["pay-value"]` {
		t.Fatalf("deleted subjects: %s", b)
	}
	c.expect("DELETE", "/subjects/pay-value?permanent=true", nil, 200, 0)
	c.expect("DELETE", "/subjects/pay-value", nil, 404, api.CodeSubjectNotFound)
	c.expect("GET", "/schemas/ids/1", nil, 404, api.CodeSchemaNotFound)
}

func TestReferencesAndDescriptors(t *testing.T) {
	t.Parallel()
	testReferencesAndDescriptors(t, newServer(t, api.Config{}))
}

func TestReferencesAndDescriptorsPostgres(t *testing.T) {
	t.Parallel()
	testReferencesAndDescriptors(t, newPostgresServer(t, api.Config{}))
}

func testReferencesAndDescriptors(t *testing.T, c *client) {
	money := "syntax = \"proto3\";\npackage shop.common.v1;\nmessage Money { int64 cents = 1; }\n"
	order := "syntax = \"proto3\";\npackage shop.order.v1;\nimport \"shop/common/v1/money.proto\";\nmessage Order { shop.common.v1.Money total = 1; }\n"
	c.expect("POST", "/subjects/shop%2Fcommon%2Fv1%2Fmoney.proto/versions", reg(money), 200, 0)
	ref := subjectref.Reference{Name: "shop/common/v1/money.proto", Subject: "shop/common/v1/money.proto", Version: 1}
	c.expect("POST", "/subjects/order-value/versions", reg(order), 422, api.CodeInvalidSchema)
	c.expect("POST", "/subjects/order-value/versions", reg(order, subjectref.Reference{Name: ref.Name, Subject: "missing", Version: 1}), 422, api.CodeInvalidSchema)
	c.expect("POST", "/subjects/order-value/versions", reg(order, ref), 200, 0)
	got := c.expect("GET", "/subjects/order-value/versions/1", nil, 200, 0).json(t).(map[string]any)
	refs, _ := got["references"].([]any)
	if len(refs) != 1 {
		t.Fatalf("references not returned: %v", got)
	}
	if b := c.expect("GET", "/subjects/shop%2Fcommon%2Fv1%2Fmoney.proto/versions/1/referencedby", nil, 200, 0).body; string(b) != "[2]" {
		t.Fatalf("referencedby: %s", b)
	}
	// The descriptor form of the same schema is the same schema.
	ser := c.expect("GET", "/subjects/order-value/versions/1?format=serialized", nil, 200, 0).json(t).(map[string]any)
	look := c.expect("POST", "/subjects/order-value", reg(ser["schema"].(string), ref), 200, 0).json(t).(map[string]any)
	if look["id"] != 2.0 {
		t.Fatalf("descriptor lookup: %v", look)
	}
	// So is a descriptor compiled by a client under its own file name, as
	// Confluent's serializers send it: look-up and re-registration find
	// the version pushed as text.
	fetch := func(context.Context, string, int) (string, []subjectref.Reference, error) { return money, nil, nil }
	own, err := schema.Parse(context.Background(), "shop/order/v1/order.proto", order, []subjectref.Reference{ref}, fetch)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString(own.Descriptor)
	if look := c.expect("POST", "/subjects/order-value", reg(b64, ref), 200, 0).json(t).(map[string]any); look["id"] != 2.0 {
		t.Fatalf("client descriptor lookup: %v", look)
	}
	if again := string(c.expect("POST", "/subjects/order-value/versions", reg(b64, ref), 200, 0).body); again != `{"id":2}` {
		t.Fatalf("client descriptor re-registration: %s", again)
	}
	// A referenced version cannot be deleted, softly or permanently, nor
	// its subject, while live versions reference it (Confluent's 42206).
	c.expect("DELETE", "/subjects/shop%2Fcommon%2Fv1%2Fmoney.proto/versions/1", nil, 422, api.CodeReferenceExists)
	c.expect("DELETE", "/subjects/shop%2Fcommon%2Fv1%2Fmoney.proto/versions/latest", nil, 422, api.CodeReferenceExists)
	c.expect("DELETE", "/subjects/shop%2Fcommon%2Fv1%2Fmoney.proto", nil, 422, api.CodeReferenceExists)
	c.expect("POST", "/compatibility/subjects/order-value/versions", reg(order, ref), 200, 0)
	// A reference to "latest" (-1, 0 or no version) is pinned to the
	// version compiled: stored and returned with its number, and counted
	// by referencedby.
	money2 := strings.Replace(money, "int64 cents = 1;", "int64 cents = 1;\n  string currency = 2;", 1)
	c.expect("POST", "/subjects/shop%2Fcommon%2Fv1%2Fmoney.proto/versions", reg(money2), 200, 0)
	for i, v := range []int{-1, 0} {
		unpinned := subjectref.Reference{Name: ref.Name, Subject: ref.Subject, Version: v}
		sub := fmt.Sprintf("latest-%d", i)
		id := c.expect("POST", "/subjects/"+sub+"/versions", reg(order, unpinned), 200, 0).json(t).(map[string]any)["id"]
		got := c.expect("GET", "/subjects/"+sub+"/versions/1", nil, 200, 0).json(t).(map[string]any)
		if r := got["references"].([]any)[0].(map[string]any); r["version"] != 2.0 {
			t.Fatalf("reference to version %d stored as %v, want pinned to 2", v, r)
		}
		by := c.expect("GET", "/subjects/shop%2Fcommon%2Fv1%2Fmoney.proto/versions/2/referencedby", nil, 200, 0).json(t).([]any)
		if !slices.Contains(by, id) {
			t.Fatalf("referencedby of version 2 is %v, missing id %v", by, id)
		}
	}
	c.expect("DELETE", "/subjects/shop%2Fcommon%2Fv1%2Fmoney.proto/versions/2", nil, 422, api.CodeReferenceExists)
	// A descriptor registered afresh is stored as text.
	c.expect("POST", "/subjects/copy/versions", reg(ser["schema"].(string), ref), 200, 0)
	text := c.expect("GET", "/subjects/copy/versions/1/schema", nil, 200, 0).body
	if !strings.Contains(string(text), "message Order") {
		t.Fatalf("descriptor not printed as text: %s", text)
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{Token: "s3cret"})
	anon := &client{t: t, url: c.url}
	wrong := &client{t: t, url: c.url, token: "guess"}
	anon.expect("POST", "/subjects/s/versions", reg(v1), 401, api.CodeUnauthorized)
	wrong.expect("POST", "/subjects/s/versions", reg(v1), 401, api.CodeUnauthorized)
	anon.expect("PUT", "/config", map[string]string{"compatibility": "NONE"}, 401, api.CodeUnauthorized)
	anon.expect("DELETE", "/subjects/s", nil, 401, api.CodeUnauthorized)
	c.expect("POST", "/subjects/s/versions", reg(v1), 200, 0)
	// Reads, look-ups and checks need no token.
	anon.expect("GET", "/subjects", nil, 200, 0)
	anon.expect("POST", "/subjects/s", reg(v1), 200, 0)
	anon.expect("POST", "/compatibility/subjects/s/versions/latest", reg(v2), 200, 0)
}

// TestAuthBasic: HTTP Basic authentication, as Confluent's clients send
// basic.auth.user.info=USER:PASSWORD, is accepted with the token as the
// password and any user name, beside the bearer token; a 401 names both
// schemes.
func TestAuthBasic(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{Token: "s3cret"})
	basic := func(userInfo string) *client {
		return &client{t: t, url: c.url, authorization: "Basic " + base64.StdEncoding.EncodeToString([]byte(userInfo))}
	}
	setLevel := map[string]string{"compatibility": "NONE"}
	for _, tc := range []struct {
		name string
		c    *client
		code int
	}{
		{"basic, the token as password", basic("sr-user:s3cret"), 200},
		{"basic, another user name", basic("ci:s3cret"), 200},
		{"basic, empty user name", basic(":s3cret"), 200},
		{"basic, scheme in lower case", &client{t: t, url: c.url, authorization: "basic " + base64.StdEncoding.EncodeToString([]byte("u:s3cret"))}, 200},
		{"bearer", &client{t: t, url: c.url, token: "s3cret"}, 200},
		{"bearer, scheme in lower case", &client{t: t, url: c.url, authorization: "bearer s3cret"}, 200},
		{"basic, wrong password", basic("sr-user:guess"), 401},
		{"basic, the token as user name", basic("s3cret:"), 401},
		{"basic, no colon", basic("s3cret"), 401},
		{"basic, not base64", &client{t: t, url: c.url, authorization: "Basic s3cret"}, 401},
		{"bearer, wrong token", &client{t: t, url: c.url, token: "guess"}, 401},
		{"the token without a scheme", &client{t: t, url: c.url, authorization: "s3cret"}, 401},
		{"missing header", &client{t: t, url: c.url}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.t = t
			want := 0
			if tc.code == 401 {
				want = api.CodeUnauthorized
			}
			r := tc.c.expect("PUT", "/config", setLevel, tc.code, want)
			if tc.code != 401 {
				return
			}
			got := r.header.Values("WWW-Authenticate")
			if len(got) != 2 || !strings.HasPrefix(got[0], "Bearer ") || !strings.HasPrefix(got[1], "Basic ") {
				t.Errorf("WWW-Authenticate %q; want a Bearer and a Basic challenge", got)
			}
			if !strings.Contains(string(r.body), "basic.auth.user.info") {
				t.Errorf("the 401 does not say how Confluent clients authenticate: %s", r.body)
			}
		})
	}
	basic("x:s3cret").expect("POST", "/subjects/s/versions", reg(v1), 200, 0)
	basic("x:guess").expect("DELETE", "/subjects/s", nil, 401, api.CodeUnauthorized)
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{BodyLimit: 1024})
	big := reg(v1 + "// " + strings.Repeat("x", 2048) + "\n")
	c.expect("POST", "/subjects/s/versions", big, 413, 413)
	// Without a Content-Length the limit applies while reading.
	raw, _ := json.Marshal(big)
	req, err := http.NewRequest("POST", c.url+"/subjects/s/versions", io.MultiReader(bytes.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", api.ContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 || req.ContentLength != 0 {
		t.Fatalf("chunked body over the limit: status %d (content length %d)", resp.StatusCode, req.ContentLength)
	}
	c.expect("POST", "/subjects/s/versions", reg(v1), 200, 0)
}

func TestConcurrentRegistrations(t *testing.T) {
	t.Parallel()
	testConcurrentRegistrations(t, newServer(t, api.Config{}))
}

func TestConcurrentRegistrationsPostgres(t *testing.T) {
	t.Parallel()
	testConcurrentRegistrations(t, newPostgresServer(t, api.Config{}))
}

func testConcurrentRegistrations(t *testing.T, c *client) {
	c.expect("PUT", "/config/s", map[string]string{"compatibility": "NONE"}, 200, 0)
	const n = 50
	var wg sync.WaitGroup
	ids := make([]float64, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := fmt.Sprintf("syntax = \"proto3\";\npackage p;\nmessage M%d { string a = 1; }\n", i)
			raw, _ := json.Marshal(reg(text))
			resp, err := http.Post(c.url+"/subjects/s/versions", api.ContentType, bytes.NewReader(raw))
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var out map[string]float64
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
				t.Errorf("status %d: %v", resp.StatusCode, err)
			}
			ids[i] = out["id"]
		}()
	}
	wg.Wait()
	var versions []int
	if err := json.Unmarshal(c.expect("GET", "/subjects/s/versions", nil, 200, 0).body, &versions); err != nil {
		t.Fatal(err)
	}
	if len(versions) != n || versions[0] != 1 || versions[n-1] != n {
		t.Fatalf("versions %v are not 1..%d", versions, n)
	}
	slices.Sort(ids)
	if len(slices.Compact(ids)) != n {
		t.Fatalf("ids are not distinct: %v", ids)
	}
}
