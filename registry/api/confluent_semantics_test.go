package api_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// The tests in this file pin answers where Confluent's clients depend on
// Confluent's exact semantics (issue 35).

const depV1 = `syntax = "proto3";
package dep;
message Hint { string s = 1; }
`

var depV2 = strings.Replace(depV1, "string s = 1;", "int32 s = 1;", 1)

const mainText = `syntax = "proto3";
package app;
import "dep.proto";
message Main { dep.Hint hint = 1; }
`

// TestCompatibilityFollowsReferences: a new version that imports a
// changed definition through a newer reference is compared with the
// definitions the previous version imported, not only its own file.
func TestCompatibilityFollowsReferences(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	c.expect("POST", "/subjects/dep/versions", reg(depV1), 200, 0)
	c.expect("POST", "/subjects/main/versions", reg(mainText, subjectref.Reference{Name: "dep.proto", Subject: "dep", Version: 1}), 200, 0)
	c.expect("PUT", "/config/dep", map[string]string{"compatibility": "NONE"}, 200, 0)
	c.expect("POST", "/subjects/dep/versions", reg(depV2), 200, 0)
	next := reg(mainText, subjectref.Reference{Name: "dep.proto", Subject: "dep", Version: 2})
	r := c.expect("POST", "/compatibility/subjects/main/versions/latest?verbose=true", next, 200, 0)
	got := r.json(t).(map[string]any)
	if got["is_compatible"] != false {
		t.Fatalf("dep.Hint.s changed from string to int32 under main's reference, yet: %s", r.body)
	}
	if !strings.Contains(string(r.body), "dep.Hint") {
		t.Errorf("the answer does not name the changed definition: %s", r.body)
	}
	c.expect("POST", "/subjects/main/versions", next, 409, api.CodeIncompatible)
	// The same closure (main v1's own references) stays compatible.
	same := reg(mainText, subjectref.Reference{Name: "dep.proto", Subject: "dep", Version: 1})
	if got := c.expect("POST", "/compatibility/subjects/main/versions/latest", same, 200, 0).json(t).(map[string]any); got["is_compatible"] != true {
		t.Fatalf("an unchanged closure is incompatible: %v", got)
	}
}

// TestCompatibilityMissingVersion: Confluent answers 40402 for a numbered
// version that does not exist, even when the subject does not either, and
// is_compatible true for "latest" of a subject without versions.
func TestCompatibilityMissingVersion(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	c.expect("POST", "/compatibility/subjects/unknown/versions/1", reg(v1), 404, api.CodeVersionNotFound)
	r := c.expect("POST", "/compatibility/subjects/unknown/versions/latest", reg(v1), 200, 0)
	if string(r.body) != `{"is_compatible":true}` {
		t.Fatalf("latest of a subject without versions: %s", r.body)
	}
	c.expect("POST", "/subjects/pay-value/versions", reg(v1), 200, 0)
	c.expect("POST", "/compatibility/subjects/pay-value/versions/7", reg(v1), 404, api.CodeVersionNotFound)
	// An invalid schema is still refused.
	c.expect("POST", "/compatibility/subjects/unknown/versions/latest", reg("syntax = \"proto3\"; message {"), 422, api.CodeInvalidSchema)
}

// TestSchemaIDListsAfterSoftDelete: an id whose versions are all soft
// deleted still exists; its lists are empty, and deleted=true shows them.
func TestSchemaIDListsAfterSoftDelete(t *testing.T) {
	t.Parallel()
	testSchemaIDLists(t, newServer(t, api.Config{}))
}

func TestSchemaIDListsAfterSoftDeletePostgres(t *testing.T) {
	t.Parallel()
	testSchemaIDLists(t, newPostgresServer(t, api.Config{}))
}

func testSchemaIDLists(t *testing.T, c *client) {
	c.expect("POST", "/subjects/pay-value/versions", reg(v1), 200, 0)
	c.expect("DELETE", "/subjects/pay-value/versions/1", nil, 200, 0)
	for path, want := range map[string]string{
		"/schemas/ids/1/versions":              `[]`,
		"/schemas/ids/1/subjects":              `[]`,
		"/schemas/ids/1/versions?deleted=true": `[{"subject":"pay-value","version":1}]`,
		"/schemas/ids/1/subjects?deleted=true": `["pay-value"]`,
	} {
		if got := string(c.expect("GET", path, nil, 200, 0).body); got != want {
			t.Errorf("GET %s: %s, want %s", path, got, want)
		}
	}
	c.expect("GET", "/schemas/ids/99/versions", nil, 404, api.CodeSchemaNotFound)
	c.expect("GET", "/schemas/ids/99/subjects?deleted=true", nil, 404, api.CodeSchemaNotFound)
}

// TestUnresolvedImportNamesTheReference: an HTTP client is told which
// import no reference supplies and how to supply one, without the
// compiler's internals or command-line advice.
func TestUnresolvedImportNamesTheReference(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	r := c.expect("POST", "/subjects/main/versions", reg(mainText), 422, api.CodeInvalidSchema)
	msg := r.json(t).(map[string]any)["message"].(string)
	for _, bad := range []string{"\x00", "no-disk", "-I", "import paths"} {
		if strings.Contains(msg, bad) {
			t.Errorf("the message holds %q: %q", bad, msg)
		}
	}
	for _, want := range []string{`"dep.proto"`, `"references"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message does not say %s: %q", want, msg)
		}
	}
	// A reference under another name than the import: both are named.
	c.expect("POST", "/subjects/dep/versions", reg(depV1), 200, 0)
	r = c.expect("POST", "/subjects/main/versions", reg(mainText, subjectref.Reference{Name: "deps/dep.proto", Subject: "dep", Version: 1}), 422, api.CodeInvalidSchema)
	msg = r.json(t).(map[string]any)["message"].(string)
	for _, want := range []string{`import "dep.proto"`, `"deps/dep.proto"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message does not say %s: %q", want, msg)
		}
	}
}

// builtinUser imports every built-in dependency Confluent's serializers
// do not register as references.
const builtinUser = `syntax = "proto3";
package app;
import "google/type/money.proto";
import "google/type/date.proto";
import "google/type/timeofday.proto";
import "google/type/latlng.proto";
import "google/type/decimal.proto";
import "google/type/interval.proto";
import "google/type/dayofweek.proto";
import "google/type/month.proto";
import "google/type/color.proto";
import "google/type/postal_address.proto";
import "google/type/phone_number.proto";
import "google/type/expr.proto";
import "google/type/datetime.proto";
import "google/type/calendar_period.proto";
import "google/type/fraction.proto";
import "google/type/localized_text.proto";
import "google/type/quaternion.proto";
import "confluent/meta.proto";
import "confluent/type/decimal.proto";
message Order {
  option (confluent.message_meta) = { doc: "an order" };
  google.type.Money price = 1 [(confluent.field_meta) = { params: [{ key: "precision", value: "2" }] }];
  google.type.Date day = 2;
  google.type.TimeOfDay at = 3;
  google.type.LatLng where = 4;
  google.type.Decimal rate = 5;
  google.type.Interval window = 6;
  google.type.DayOfWeek weekday = 7;
  google.type.Month month = 8;
  google.type.Color color = 9;
  google.type.PostalAddress address = 10;
  google.type.PhoneNumber phone = 11;
  google.type.Expr rule = 12;
  google.type.DateTime when = 13;
  google.type.CalendarPeriod period = 14;
  google.type.Fraction share = 15;
  google.type.LocalizedText label = 16;
  google.type.Quaternion spin = 17;
  confluent.type.Decimal amount = 18;
}
`

// TestBuiltinDependencies: google/type/*.proto and Confluent's own files
// resolve without a reference, in the text form and in the descriptor
// form Confluent's serializers send.
func TestBuiltinDependencies(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	c.expect("POST", "/subjects/order-value/versions", reg(builtinUser), 200, 0)
	r := c.expect("GET", "/subjects/order-value/versions/1?format=serialized", nil, 200, 0)
	b, err := base64.StdEncoding.DecodeString(r.json(t).(map[string]any)["schema"].(string))
	if err != nil {
		t.Fatal(err)
	}
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := proto.Unmarshal(b, fdp); err != nil {
		t.Fatal(err)
	}
	if len(fdp.GetDependency()) != 19 {
		t.Fatalf("dependencies %v", fdp.GetDependency())
	}
	// The descriptor form, as a serializer registers it under another
	// subject, resolves the same imports.
	c.expect("POST", "/subjects/order2-value/versions", reg(base64.StdEncoding.EncodeToString(b)), 200, 0)
}

func rawRequest(t *testing.T, c *client, method, path, ctype, accept, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, body: b, ctype: resp.Header.Get("Content-Type"), header: resp.Header}
}

// TestContentNegotiation: request bodies of other media types are 415,
// and Accept picks the answer's type, 406 when none of the registry's
// is acceptable.
func TestContentNegotiation(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	body := `{"schema": "syntax = \"proto3\"; package a; message A { string s = 1; }"}`
	for _, ct := range []string{"text/html", "text/plain", "application/xml", "application/x-www-form-urlencoded"} {
		r := rawRequest(t, c, "POST", "/subjects/a/versions", ct, "", body)
		if r.status != 415 || r.code(t) != 415 || r.ctype != api.ContentType {
			t.Errorf("Content-Type %s: %d %s %s", ct, r.status, r.ctype, r.body)
		}
	}
	for _, ct := range []string{"", api.ContentType, "application/vnd.schemaregistry+json", "application/json", "application/json; charset=utf-8", "application/octet-stream"} {
		if r := rawRequest(t, c, "POST", "/subjects/a/versions", ct, "", body); r.status != 200 {
			t.Errorf("Content-Type %q: %d %s", ct, r.status, r.body)
		}
	}
	for accept, want := range map[string]string{
		"":                                    api.ContentType,
		"*/*":                                 api.ContentType,
		"application/*":                       api.ContentType,
		"application/json":                    "application/json",
		"application/vnd.schemaregistry+json": "application/vnd.schemaregistry+json",
		"text/html, application/json;q=0.9":   "application/json",
		"application/json;q=0.5, */*;q=0.1":   "application/json",
		"application/vnd.schemaregistry.v1+json, application/json": api.ContentType,
	} {
		r := rawRequest(t, c, "GET", "/subjects", "", accept, "")
		if r.status != 200 || r.ctype != want {
			t.Errorf("Accept %q: %d %q, want %q: %s", accept, r.status, r.ctype, want, r.body)
		}
	}
	for _, accept := range []string{"text/html", "application/xml", "application/json;q=0"} {
		r := rawRequest(t, c, "GET", "/subjects", "", accept, "")
		if r.status != 406 || r.code(t) != 406 {
			t.Errorf("Accept %q: %d %s", accept, r.status, r.body)
		}
	}
	// The plain-text endpoints answer text whatever JSON type is asked for.
	c.expect("POST", "/subjects/pay-value/versions", reg(v1), 200, 0)
	if r := rawRequest(t, c, "GET", "/subjects/pay-value/versions/1/schema", "", "text/plain", ""); r.status != 200 {
		t.Errorf("Accept text/plain on /schema: %d %s", r.status, r.body)
	}
}

// TestLookupSerialized: looking a schema up answers the serialized form
// when asked, as GET does.
func TestLookupSerialized(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	c.expect("POST", "/subjects/pay-value/versions", reg(v1), 200, 0)
	want := c.expect("GET", "/subjects/pay-value/versions/1?format=serialized", nil, 200, 0).json(t).(map[string]any)["schema"]
	got := c.expect("POST", "/subjects/pay-value?format=serialized", reg(v1), 200, 0).json(t).(map[string]any)["schema"]
	if got != want || strings.Contains(got.(string), "syntax") {
		t.Fatalf("lookup with format=serialized: %.80q, want %.80q", got, want)
	}
}
