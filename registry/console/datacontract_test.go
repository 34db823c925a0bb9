package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestVersionShowsDataContract: the version page lists the version's
// rules and metadata.
func TestVersionShowsDataContract(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	body, _ := json.Marshal(map[string]any{
		"schemaType": "PROTOBUF", "schema": paymentV1(t),
		"metadata": map[string]any{"properties": map[string]string{"msgcontract.events": "shop.payment.v1.PaySuccess"}, "tags": map[string][]string{"PaySuccess.order_id": {"PII"}}},
		"ruleSet":  map[string]any{"domainRules": []any{map[string]any{"name": "msgcontract-bizkey-order_id", "kind": "CONDITION", "mode": "WRITE", "type": "CEL", "expr": "message.order_id != ''", "onFailure": "ERROR"}}},
	})
	req, _ := http.NewRequest(http.MethodPost, f.URL+"/subjects/rules-value/versions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("register: %d", resp.StatusCode)
	}
	code, page := get(t, f.URL+"/ui/version?s=rules-value&v=1")
	if code != http.StatusOK {
		t.Fatalf("version page: %d", code)
	}
	for _, want := range []string{"<h2>Rules</h2>", "msgcontract-bizkey-order_id", "message.order_id != &#39;&#39;", "CONDITION", "WRITE",
		"<h2>Metadata</h2>", "msgcontract.events", "shop.payment.v1.PaySuccess", "PaySuccess.order_id", "PII"} {
		if !strings.Contains(page, want) {
			t.Errorf("the version page lacks %q", want)
		}
	}
}

// TestDiffShowsRuleChanges: the diff page lists rules and metadata
// properties added, removed or changed between two versions.
func TestDiffShowsRuleChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	register := func(expr, owner string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{
			"schemaType": "PROTOBUF", "schema": paymentV1(t),
			"metadata": map[string]any{"properties": map[string]string{"owner": owner}},
			"ruleSet":  map[string]any{"domainRules": []any{map[string]any{"name": "check", "kind": "CONDITION", "mode": "WRITE", "type": "CEL", "expr": expr}}},
		})
		req, _ := http.NewRequest(http.MethodPost, f.URL+"/subjects/rules-value/versions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("register: %d", resp.StatusCode)
		}
	}
	register("message.order_id != ''", "payments")
	register("size(message.order_id) > 3", "billing")
	code, page := get(t, f.URL+"/ui/diff?s=rules-value&from=1&to=2")
	if code != http.StatusOK {
		t.Fatalf("diff page: %d", code)
	}
	for _, want := range []string{"<h2>Data contract</h2>", "rule <code>check</code>", "changed", "size(message.order_id) &gt; 3", "property <code>owner</code>", "billing"} {
		if !strings.Contains(page, want) {
			t.Errorf("the diff page lacks %q", want)
		}
	}
}

// TestRegisterFormAttachesContractRules: registering from the check form
// sends the data contract the contract implies, as registry push does.
func TestRegisterFormAttachesContractRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	form := url.Values{"subject": {"form-value"}, "schema": {paymentV1(t)}, "confirm": {"yes"}, "token": {token}}
	if status, body := post(t, f.URL+"/ui/register", f.URL, form); status != http.StatusSeeOther {
		t.Fatalf("register: HTTP %d\n%s", status, body)
	}
	v, err := f.Store.Version(context.Background(), "form-value", 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.Schema.RuleSet, `"msgcontract-bizkey-order_id"`) || !strings.Contains(v.Schema.Metadata, `"msgcontract.events"`) {
		t.Fatalf("registered without the contract's rules:\nruleSet %s\nmetadata %s", v.Schema.RuleSet, v.Schema.Metadata)
	}
}

// An edition-2024 schema (option import, export and local) registers and
// its version page shows the source, its keywords highlighted.
func TestVersionShowsEdition2024(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	src := "edition = \"2024\";\npackage shop.pay.v1;\nimport option \"msgcontract/v1/options.proto\";\n" +
		"local message Money { int64 units = 1; }\n" +
		"export message Paid {\n  option (msgcontract.v1.event) = { topic: \"pay\" event_type: \"PAID\" biz_key: \"{order_id}\" };\n" +
		"  string order_id = 1;\n  Money amount = 2;\n}\n"
	f.register(t, "ed-value", src)
	code, page := get(t, f.URL+"/ui/version?s=ed-value&v=1")
	if code != http.StatusOK {
		t.Fatalf("version page: %d", code)
	}
	for _, want := range []string{`<span class="k">edition</span>`, `<span class="k">export</span> <span class="k">message</span> Paid`,
		`<span class="k">local</span> <span class="k">message</span> Money`, `<span class="k">import</span> <span class="k">option</span>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the version page lacks %q", want)
		}
	}
}
