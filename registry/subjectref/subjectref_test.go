package subjectref_test

import (
	"slices"
	"testing"

	"github.com/msgcontract/msgcontract/registry/subjectref"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, ctx, name string }{
		{"pay", ".", "pay"},
		{":.ctx:pay", ".ctx", "pay"},
		{":.:pay", ".", "pay"},
		{":.ctx:a:b", ".ctx", "a:b"},
		{":.ctx:", ".ctx", ""},
		{":.nocolon", ".", ":.nocolon"},
		{":pay", ".", ":pay"},
	} {
		if ctx, name := subjectref.Split(tc.in); ctx != tc.ctx || name != tc.name {
			t.Errorf("Split(%q) = %q, %q; want %q, %q", tc.in, ctx, name, tc.ctx, tc.name)
		}
	}
}

func TestInContext(t *testing.T) {
	t.Parallel()
	refs := []subjectref.Reference{{Name: "a", Subject: "money"}, {Name: "b", Subject: ":.other:x"}, {Name: "c", Subject: ":.:y"}}
	for _, tc := range []struct {
		subject string
		want    []string
	}{
		{"pay", []string{"money", ":.other:x", "y"}},
		{":.ctx:pay", []string{":.ctx:money", ":.other:x", "y"}},
	} {
		got := subjectref.InContext(tc.subject, refs)
		var subs []string
		for _, r := range got {
			subs = append(subs, r.Subject)
		}
		if !slices.Equal(subs, tc.want) {
			t.Errorf("InContext(%q) subjects = %v, want %v", tc.subject, subs, tc.want)
		}
	}
	if refs[0].Subject != "money" {
		t.Fatal("InContext changed its argument")
	}
	if got := subjectref.InContext(":.ctx:pay", nil); got != nil {
		t.Errorf("InContext of no references = %v, want nil", got)
	}
}

func TestFileName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"payments-value", "payments-value.proto"},
		{"shop/payment/v1/payment.proto", "shop/payment/v1/payment.proto"},
		{":.ctx:payments-value", "payments-value.proto"},
		{":.:money.proto", "money.proto"},
	} {
		if got := subjectref.FileName(tc.in); got != tc.want {
			t.Errorf("FileName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
