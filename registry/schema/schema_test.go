package schema_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

const dep = `syntax = "proto3";
package shop.common.v1;
message Money { int64 cents = 1; string currency = 2; }
`

const root = `syntax = "proto3";
package shop.pay.v1;
import "msgcontract/v1/options.proto";
import "shop/common/v1/money.proto";
option (msgcontract.v1.defaults) = {
  error_ranges: [{ from: 40000 to: 49999 retryable: false name: "business" }]
};
message Paid {
  option (msgcontract.v1.event) = { topic: "pay" event_type: "PAID" biz_key: "order:{order_id}" };
  string order_id = 1;
  shop.common.v1.Money amount = 2;
}
`

func fetcher(subjects map[string]string) schema.Fetcher {
	return func(_ context.Context, subject string, _ int) (string, []subjectref.Reference, error) {
		text, ok := subjects[subject]
		if !ok {
			return "", nil, store.ErrSubjectNotFound
		}
		return text, nil, nil
	}
}

var refs = []subjectref.Reference{{Name: "shop/common/v1/money.proto", Subject: "money", Version: 1}}

func TestParseTextAndDescriptorAgree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fetch := fetcher(map[string]string{"money": dep})
	p, err := schema.Parse(ctx, "pay.proto", root, refs, fetch)
	if err != nil {
		t.Fatal(err)
	}
	if p.Text != root {
		t.Fatalf("text schema was changed:\n%s", p.Text)
	}
	ev := p.Set.Event("shop.pay.v1.Paid")
	if ev == nil || ev.BizKeyTemplate != "order:{order_id}" {
		t.Fatalf("event not resolved: %+v", ev)
	}
	b64 := base64.StdEncoding.EncodeToString(p.Descriptor)
	q, err := schema.Parse(ctx, "ignored.proto", b64, refs, fetch)
	if err != nil {
		t.Fatalf("descriptor form: %v", err)
	}
	if q.Name != "ignored.proto" {
		t.Errorf("the schema is compiled under the name given, got %q", q.Name)
	}
	ev = q.Set.Event("shop.pay.v1.Paid")
	if ev == nil || ev.BizKeyTemplate != "order:{order_id}" || ev.Topic != "pay" {
		t.Fatalf("options lost printing the descriptor:\n%s", q.Text)
	}
	if len(q.Set.Files[0].Defaults.Rules.Ranges) != 1 {
		t.Fatalf("file options lost:\n%s", q.Text)
	}
	again, err := schema.Parse(ctx, "x.proto", b64, refs, fetch)
	if err != nil || again.Text != q.Text {
		t.Fatalf("printing is not deterministic")
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, raw string
		refs      []subjectref.Reference
		want      string
	}{
		{name: "empty", raw: "  ", want: "empty"},
		{name: "syntax error", raw: "syntax = \"proto3\"; message {", want: "s.proto:1:"},
		{name: "missing reference", raw: root, want: "money.proto"},
		{name: "lint error", raw: strings.Replace(root, "order:{order_id}", "order:{amount}", 1), refs: refs, want: "BIZKEY"},
		{name: "garbage base64", raw: "AAAA", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := schema.Parse(ctx, "s.proto", tc.raw, tc.refs, fetcher(map[string]string{"money": dep}))
			var ie *schema.InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want an InvalidError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %q, want it to mention %q", err, tc.want)
			}
		})
	}
}
