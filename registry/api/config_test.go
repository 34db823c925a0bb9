package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
)

// everyField sets every field of Confluent's config.
const everyField = `{
  "compatibility": "FULL",
  "normalize": true,
  "validateFields": false,
  "validateRules": true,
  "alias": "pay-value-v2",
  "compatibilityGroup": "application.major.version",
  "defaultMetadata": {"properties": {"owner": "payments", "tier": "1"}, "tags": {"Paid.order_id": ["PII", "KEY", "PII"]}, "sensitive": ["tier"]},
  "overrideMetadata": {"properties": {"application.major.version": "2"}},
  "defaultRuleSet": {"domainRules": [{"name": "checkAmount", "kind": "CONDITION", "mode": "WRITE", "type": "CEL", "expr": "message.amount > 0", "onFailure": "DLQ", "params": {"dlq.topic": "bad-pay"}, "tags": ["PII"]}]},
  "overrideRuleSet": {"migrationRules": [{"name": "upgrade_v2", "kind": "TRANSFORM", "mode": "UPGRADE", "type": "JSONATA", "expr": "$", "doc": "v1 to v2", "disabled": true}]}
}`

// everyFieldBack is what GET /config answers after everyField: level as
// compatibilityLevel, tags sorted without duplicates, rule defaults
// filled in.
const everyFieldBack = `{"alias":"pay-value-v2","normalize":true,"validateFields":false,"validateRules":true,` +
	`"compatibilityLevel":"FULL","compatibilityGroup":"application.major.version",` +
	`"defaultMetadata":{"tags":{"Paid.order_id":["KEY","PII"]},"properties":{"owner":"payments","tier":"1"},"sensitive":["tier"]},` +
	`"overrideMetadata":{"properties":{"application.major.version":"2"}},` +
	`"defaultRuleSet":{"domainRules":[{"name":"checkAmount","kind":"CONDITION","mode":"WRITE","type":"CEL","tags":["PII"],"params":{"dlq.topic":"bad-pay"},"expr":"message.amount \u003e 0","onFailure":"DLQ","disabled":false}]},` +
	`"overrideRuleSet":{"migrationRules":[{"name":"upgrade_v2","doc":"v1 to v2","kind":"TRANSFORM","mode":"UPGRADE","type":"JSONATA","expr":"$","disabled":true}]}}`

func TestConfigEveryField(t *testing.T) {
	t.Parallel()
	testConfigEveryField(t, newServer(t, api.Config{}))
}

func TestConfigEveryFieldPostgres(t *testing.T) {
	t.Parallel()
	testConfigEveryField(t, newPostgresServer(t, api.Config{}))
}

func testConfigEveryField(t *testing.T, c *client) {
	for _, scope := range []string{"/config", "/config/pay-value", "/config/:.ctx:"} {
		put := c.expect("PUT", scope, everyField, 200, 0)
		// PUT answers in the update request's form: the level as compatibility.
		var answer map[string]any
		if err := json.Unmarshal(put.body, &answer); err != nil || answer["compatibility"] != "FULL" || answer["compatibilityGroup"] != "application.major.version" {
			t.Fatalf("PUT %s answered %s", scope, put.body)
		}
		if got := string(c.expect("GET", scope, nil, 200, 0).body); got != everyFieldBack {
			t.Fatalf("GET %s:\n got %s\nwant %s", scope, got, everyFieldBack)
		}
	}
	// A subject without a config of its own: the one in force, whole.
	if got := string(c.expect("GET", "/config/other?defaultToGlobal=true", nil, 200, 0).body); got != everyFieldBack {
		t.Fatalf("defaultToGlobal:\n got %s\nwant %s", got, everyFieldBack)
	}
	c.expect("GET", "/config/other", nil, 404, api.CodeConfigNotFound)

	// Fields left out are kept, null removes one, a field replaces.
	c.expect("PUT", "/config/pay-value", `{"compatibilityLevel": "NONE", "alias": null, "defaultRuleSet": null, "overrideMetadata": {"properties": {"a": "b"}}}`, 200, 0)
	var got map[string]json.RawMessage
	if err := json.Unmarshal(c.expect("GET", "/config/pay-value", nil, 200, 0).body, &got); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"compatibilityLevel": `"NONE"`, "normalize": "true", "validateFields": "false",
		"overrideMetadata": `{"properties":{"a":"b"}}`, "compatibilityGroup": `"application.major.version"`,
	} {
		if string(got[k]) != want {
			t.Errorf("after a partial PUT, %s = %s, want %s", k, got[k], want)
		}
	}
	for _, k := range []string{"alias", "defaultRuleSet"} {
		if _, ok := got[k]; ok {
			t.Errorf("after a PUT of %s: null, it is still %s", k, got[k])
		}
	}

	// DELETE removes the whole config and answers it.
	var prev map[string]any
	if err := json.Unmarshal(c.expect("DELETE", "/config/pay-value", nil, 200, 0).body, &prev); err != nil || prev["compatibilityLevel"] != "NONE" || prev["normalize"] != true {
		t.Fatalf("DELETE answered %v (%v)", prev, err)
	}
	c.expect("GET", "/config/pay-value", nil, 404, api.CodeConfigNotFound)
}

// TestConfigFieldsBesideLevel: today's clients send one field at a time,
// and a field beside the level is not dropped. Before the config kept
// every field, {"validateFields": true} was 422 and normalize beside a
// level was silently lost.
func TestConfigFieldsBesideLevel(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	c.expect("PUT", "/config", `{"validateFields": true}`, 200, 0)
	if got := string(c.expect("GET", "/config", nil, 200, 0).body); got != `{"validateFields":true,"compatibilityLevel":"BACKWARD"}` {
		t.Fatalf("GET /config: %s", got)
	}
	c.expect("PUT", "/config/s", `{"compatibility": "FULL", "normalize": true}`, 200, 0)
	if got := string(c.expect("GET", "/config/s", nil, 200, 0).body); got != `{"normalize":true,"compatibilityLevel":"FULL"}` {
		t.Fatalf("GET /config/s: %s", got)
	}
	// A subject's config without a level takes the level in force.
	c.expect("PUT", "/config/t", `{"normalize": true}`, 200, 0)
	if got := string(c.expect("GET", "/config/t?defaultToGlobal=true", nil, 200, 0).body); got != `{"normalize":true,"compatibilityLevel":"BACKWARD"}` {
		t.Fatalf("GET /config/t: %s", got)
	}

	// normalize=true in the config normalizes registrations without the
	// query: the stored text is the canonical one, without comments.
	c.expect("POST", "/subjects/s/versions", reg("// a comment\n"+v1), 200, 0)
	if got := string(c.expect("GET", "/subjects/s/versions/1/schema", nil, 200, 0).body); strings.Contains(got, "a comment") {
		t.Fatalf("config normalize=true did not normalize the registration:\n%s", got)
	}
	c.expect("POST", "/subjects/u/versions", reg("// a comment\n"+v1), 200, 0)
	if got := string(c.expect("GET", "/subjects/u/versions/1/schema", nil, 200, 0).body); !strings.Contains(got, "a comment") {
		t.Fatalf("without normalize the text is stored as sent:\n%s", got)
	}
}

func TestConfigRefused(t *testing.T) {
	t.Parallel()
	c := newServer(t, api.Config{})
	for body, code := range map[string]int{
		`{"compatibility": "SIDEWAYS"}`:                                                             api.CodeInvalidLevel,
		`{"compatibility": "FULL", "compatibilityLevel": "NONE"}`:                                   api.CodeInvalidLevel,
		`{"compatibilityPolicy": "x"}`:                                                              api.CodeInvalidLevel,
		`{"normalize": "yes"}`:                                                                      api.CodeInvalidLevel,
		`{"defaultRuleSet": {"domainRules": [{"type": "CEL"}]}}`:                                    api.CodeInvalidRuleSet,
		`{"overrideRuleSet": {"domainRules": [{"name": "a"}]}}`:                                     api.CodeInvalidRuleSet,
		`{"defaultRuleSet": {"migrationRules": [{"name": "a", "type": "CEL", "mode": "WRITE"}]}}`:   api.CodeInvalidRuleSet,
		`{"defaultRuleSet": {"domainRules": [{"name": "a", "type": "CEL", "onFailure": "RETRY"}]}}`: api.CodeInvalidRuleSet,
	} {
		c.expect("PUT", "/config/s", json.RawMessage(body), 422, code)
	}
	c.expect("PUT", "/config/s", `{`, 400, api.CodeInvalidSchema)
	c.expect("GET", "/config/s", nil, 404, api.CodeConfigNotFound)
}
