package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
)

const (
	paidMetadata = `{"properties":{"owner":"payments"},"tags":{"Paid.order_id":["PII"]},"sensitive":["owner"]}`
	paidRuleSet  = `{"domainRules":[{"name":"msgcontract.bizkey.order_id","kind":"CONDITION","mode":"WRITE","type":"CEL","expr":"message.order_id != ''","onFailure":"ERROR"}],` +
		`"migrationRules":[{"name":"up","kind":"TRANSFORM","mode":"UPGRADE","type":"JSONATA","expr":"$"}]}`
	// paidBack are both as answered: canonical, defaults filled in.
	paidMetadataBack = `{"tags":{"Paid.order_id":["PII"]},"properties":{"owner":"payments"},"sensitive":["owner"]}`
	paidRuleSetBack  = `{"migrationRules":[{"name":"up","kind":"TRANSFORM","mode":"UPGRADE","type":"JSONATA","expr":"$","disabled":false}],` +
		`"domainRules":[{"name":"msgcontract.bizkey.order_id","kind":"CONDITION","mode":"WRITE","type":"CEL","expr":"message.order_id != ''","onFailure":"ERROR","disabled":false}]}`
)

// withContract is a registration of text with raw metadata and rule set
// (left out when "").
func withContract(text, metadata, ruleSet string) string {
	m := reg(text)
	if metadata != "" {
		m["metadata"] = json.RawMessage(metadata)
	}
	if ruleSet != "" {
		m["ruleSet"] = json.RawMessage(ruleSet)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// contractOf reads metadata and ruleSet from an answer, as compact JSON.
func contractOf(t *testing.T, body []byte) (metadata, ruleSet string) {
	t.Helper()
	var v struct {
		Metadata json.RawMessage `json:"metadata"`
		RuleSet  json.RawMessage `json:"ruleSet"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return string(v.Metadata), string(v.RuleSet)
}

func TestContractStored(t *testing.T) {
	t.Parallel()
	testContractStored(t, newServer(t, api.Config{}))
}

func TestContractStoredPostgres(t *testing.T) {
	t.Parallel()
	testContractStored(t, newPostgresServer(t, api.Config{}))
}

func testContractStored(t *testing.T, c *client) {
	// Rule names are Confluent's: letters, digits, '_' and '-'.
	c.expect("POST", "/subjects/pay/versions", withContract(v1, paidMetadata, paidRuleSet), 422, api.CodeInvalidRuleSet)
	rs := strings.ReplaceAll(paidRuleSet, "msgcontract.bizkey.order_id", "msgcontract_bizkey_order_id")
	rsBack := strings.ReplaceAll(paidRuleSetBack, "msgcontract.bizkey.order_id", "msgcontract_bizkey_order_id")
	id := c.expect("POST", "/subjects/pay/versions", withContract(v1, paidMetadata, rs), 200, 0).json(t).(map[string]any)["id"]
	check := func(what string, body []byte) {
		t.Helper()
		md, r := contractOf(t, body)
		if md != paidMetadataBack || r != rsBack {
			t.Fatalf("%s:\nmetadata %s\n    want %s\nruleSet  %s\n    want %s", what, md, paidMetadataBack, r, rsBack)
		}
	}
	check("GET latest", c.expect("GET", "/subjects/pay/versions/latest", nil, 200, 0).body)
	check("GET version 1", c.expect("GET", "/subjects/pay/versions/1", nil, 200, 0).body)
	check("GET by id", c.expect("GET", fmt.Sprintf("/schemas/ids/%v", id), nil, 200, 0).body)
	check("look-up with them", c.expect("POST", "/subjects/pay", withContract(v1, paidMetadata, rs), 200, 0).body)
	// A look-up without them finds the version a registration would
	// give the schema: the latest one's.
	check("look-up without them", c.expect("POST", "/subjects/pay", reg(v1), 200, 0).body)
	var all []json.RawMessage
	if err := json.Unmarshal(c.expect("GET", "/schemas", nil, 200, 0).body, &all); err != nil || len(all) != 1 {
		t.Fatalf("GET /schemas: %v %v", all, err)
	}
	check("GET /schemas", all[0])

	// The same schema again, with them or without them (a serializer
	// that auto-registers), is the same version.
	for _, body := range []string{withContract(v1, paidMetadata, rs), withContract(v1, "", "")} {
		if got := c.expect("POST", "/subjects/pay/versions", body, 200, 0).json(t).(map[string]any)["id"]; got != id {
			t.Fatalf("re-registration got id %v, want %v", got, id)
		}
	}
	// A new version without them keeps the previous version's.
	c.expect("POST", "/subjects/pay/versions", reg(v2), 200, 0)
	check("version 2, registered without them", c.expect("GET", "/subjects/pay/versions/2", nil, 200, 0).body)
	// Other metadata on the same text is another schema: a new version and id.
	other := c.expect("POST", "/subjects/pay/versions", withContract(v2, `{"properties":{"owner":"billing"}}`, ""), 200, 0).json(t).(map[string]any)["id"]
	if other == id {
		t.Fatal("other metadata got the same id")
	}
	md, r := contractOf(t, c.expect("GET", "/subjects/pay/versions/3", nil, 200, 0).body)
	if md != `{"properties":{"owner":"billing"}}` || r != rsBack {
		t.Fatalf("version 3: metadata %s ruleSet %s (the rules are kept when only metadata is sent)", md, r)
	}
	// Empty metadata is none: sent, it does not inherit.
	c.expect("POST", "/subjects/pay/versions", withContract(v2, `{}`, `{}`), 200, 0)
	if md, r := contractOf(t, c.expect("GET", "/subjects/pay/versions/4", nil, 200, 0).body); md != "" || r != "" {
		t.Fatalf("version 4: metadata %s ruleSet %s, want none", md, r)
	}
}

func TestContractValidation(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	rule := func(fields string) string { return `{"domainRules":[` + fields + `]}` }
	for why, rs := range map[string]string{
		"unknown kind":      rule(`{"name":"a","type":"CEL","kind":"SOMETIMES"}`),
		"unknown mode":      rule(`{"name":"a","type":"CEL","mode":"ALWAYS"}`),
		"unknown onFailure": rule(`{"name":"a","type":"CEL","onFailure":"RETRY"}`),
		"missing name":      rule(`{"type":"CEL"}`),
		"missing type":      rule(`{"name":"a"}`),
		"duplicate name":    rule(`{"name":"a","type":"CEL"},{"name":"a","type":"CEL_FIELD"}`),
		"migration mode":    rule(`{"name":"a","type":"CEL","mode":"UPGRADE"}`),
		"two actions":       rule(`{"name":"a","type":"CEL","mode":"WRITE","onFailure":"ERROR,NONE"}`),
		"bad name":          rule(`{"name":"1a","type":"CEL"}`),
	} {
		r := c.expect("POST", "/subjects/s/versions", withContract(v1, "", rs), 422, api.CodeInvalidRuleSet)
		if !strings.Contains(string(r.body), "domainRules[") {
			t.Errorf("%s: the message does not say which rule: %s", why, r.body)
		}
	}
	c.expect("GET", "/subjects/s/versions", nil, 404, api.CodeSubjectNotFound)
	ok := rule(`{"name":"a","type":"CEL","mode":"WRITEREAD","onFailure":"ERROR,NONE","onSuccess":"NONE"},{"name":"b","type":"CEL_FIELD","kind":"TRANSFORM","mode":"READ","onFailure":"DLQ"}`)
	c.expect("POST", "/subjects/s/versions", withContract(v1, "", ok), 200, 0)
}

// TestContractConfigMerge: the config's default metadata and rules go
// under the request's, its override ones over them, with Confluent's
// merge (rules by name, properties by key).
func TestContractConfigMerge(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	c.expect("PUT", "/config/pay", `{
	  "defaultMetadata": {"properties": {"owner": "default", "tier": "2"}},
	  "overrideMetadata": {"properties": {"tier": "1"}},
	  "defaultRuleSet": {"domainRules": [{"name": "a", "type": "CEL", "expr": "default"}, {"name": "b", "type": "CEL", "expr": "default"}]},
	  "overrideRuleSet": {"domainRules": [{"name": "b", "type": "CEL", "expr": "override"}]}}`, 200, 0)
	c.expect("POST", "/subjects/pay/versions", withContract(v1, `{"properties":{"owner":"payments","tier":"3"}}`,
		`{"domainRules":[{"name":"a","type":"CEL","expr":"request"},{"name":"c","type":"CEL","expr":"request"}]}`), 200, 0)
	md, rs := contractOf(t, c.expect("GET", "/subjects/pay/versions/latest", nil, 200, 0).body)
	if md != `{"properties":{"owner":"payments","tier":"1"}}` {
		t.Errorf("metadata %s", md)
	}
	var set struct{ DomainRules []struct{ Name, Expr string } }
	if err := json.Unmarshal([]byte(rs), &set); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(set.DomainRules); got != "[{a request} {c request} {b override}]" {
		t.Errorf("rules %s", got)
	}
}

// TestContractCompatibilityGroup: with a compatibilityGroup, a version is
// checked only against versions with its value of that property.
func TestContractCompatibilityGroup(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	c.expect("PUT", "/config/pay", `{"compatibility": "BACKWARD", "compatibilityGroup": "major"}`, 200, 0)
	major := func(n int) string { return fmt.Sprintf(`{"properties":{"major":"%d"}}`, n) }
	c.expect("POST", "/subjects/pay/versions", withContract(v1, major(1), ""), 200, 0)
	c.expect("POST", "/subjects/pay/versions", withContract(deleted, major(1), ""), 409, api.CodeIncompatible)
	for n, want := range map[int]string{1: `{"is_compatible":false}`, 2: `{"is_compatible":true}`} {
		if got := string(c.expect("POST", "/compatibility/subjects/pay/versions", withContract(deleted, major(n), ""), 200, 0).body); got != want {
			t.Errorf("check in group %d: %s, want %s", n, got, want)
		}
	}
	c.expect("POST", "/subjects/pay/versions", withContract(deleted, major(2), ""), 200, 0)
	// A check against one version: that version binds only a schema of its
	// group (Confluent filters the one version as it filters the history).
	for path, want := range map[string]string{
		"/compatibility/subjects/pay/versions/1":      `{"is_compatible":true}`, // major 1 vs a major 2 schema
		"/compatibility/subjects/pay/versions/latest": `{"is_compatible":true}`, // version 2, same group, same text
	} {
		if got := string(c.expect("POST", path, withContract(deleted, major(2), ""), 200, 0).body); got != want {
			t.Errorf("%s with a major 2 schema: %s, want %s", path, got, want)
		}
	}
	if got := string(c.expect("POST", "/compatibility/subjects/pay/versions/1", withContract(deleted, major(1), ""), 200, 0).body); got != `{"is_compatible":false}` {
		t.Errorf("version 1 with a major 1 schema that breaks it: %s, want incompatible", got)
	}
	// Without a group, the same break is refused.
	c.expect("POST", "/subjects/flat/versions", withContract(v1, major(1), ""), 200, 0)
	c.expect("POST", "/subjects/flat/versions", withContract(deleted, major(2), ""), 409, api.CodeIncompatible)
}

// TestContractVersion: Confluent's compare-and-set is the request's
// "version" (the registration must make that version, else 422/42201,
// and the metadata then records it as confluent:version); a
// confluent:version in the metadata is set to the version made, and
// finds the version it names when the schema is the same.
func TestContractVersion(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	withVersion := func(text string, v int) map[string]any {
		m := reg(text)
		m["version"] = v
		return m
	}
	c.expect("POST", "/subjects/pay/versions", withVersion(v1, 2), 422, api.CodeInvalidSchema)
	c.expect("POST", "/subjects/pay/versions", withVersion(v1, 1), 200, 0)
	md, _ := contractOf(t, c.expect("GET", "/subjects/pay/versions/1", nil, 200, 0).body)
	if md != `{"properties":{"confluent:version":"1"}}` {
		t.Fatalf("metadata %s", md)
	}
	// Two writers read version 1 and both register version 2: one wins.
	c.expect("POST", "/subjects/pay/versions", withVersion(v2, 2), 200, 0)
	r := c.expect("POST", "/subjects/pay/versions", withVersion(newKey, 2), 422, api.CodeInvalidSchema)
	if !strings.Contains(string(r.body), "latest version (2)") {
		t.Errorf("message: %s", r.body)
	}
	// The same schema without metadata is version 2 (confluent:version is
	// ignored when the request has none); naming version 2 finds it too.
	for _, body := range []string{withContract(v2, "", ""), withContract(v2, `{"properties":{"confluent:version":"2"}}`, "")} {
		if got := string(c.expect("POST", "/subjects/pay", body, 200, 0).body); !strings.Contains(got, `"version":2`) {
			t.Fatalf("look-up %s: %s", body, got)
		}
		c.expect("POST", "/subjects/pay/versions", body, 200, 0)
	}
	if got := string(c.expect("GET", "/subjects/pay/versions", nil, 200, 0).body); got != "[1,2]" {
		t.Fatalf("versions %s", got)
	}
	// A stale confluent:version on a new schema is renumbered, as in Confluent.
	c.expect("POST", "/subjects/pay/versions", withContract(v2+"\nmessage Extra {}\n", `{"properties":{"confluent:version":"1"}}`, ""), 200, 0)
	if md, _ := contractOf(t, c.expect("GET", "/subjects/pay/versions/3", nil, 200, 0).body); md != `{"properties":{"confluent:version":"3"}}` {
		t.Fatalf("version 3 metadata %s", md)
	}
	// An id is still IMPORT mode's alone.
	m := reg(v1)
	m["id"] = 7
	c.expect("POST", "/subjects/pay/versions", m, 422, api.CodeOperationNotAllowed)
}
