package bizkey

import (
	"errors"
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"AZaz09-._~": "AZaz09-._~",
		"a:b":        "a%3Ab",
		"a b":        "a%20b",
		"100%":       "100%25",
		"{}/?#":      "%7B%7D%2F%3F%23",
		"ü":          "%C3%BC",
		"订单":         "%E8%AE%A2%E5%8D%95",
		"💳":          "%F0%9F%92%B3",
		"":           "",
	}
	for in, want := range tests {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBuilderNoCollision(t *testing.T) {
	t.Parallel()
	key := func(a, b string) string {
		var bl Builder
		bl.String("a", a)
		bl.Literal(":")
		bl.String("b", b)
		k, err := bl.Key()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	if key("a:b", "c") == key("a", "b:c") {
		t.Error("a:b + c collides with a + b:c")
	}
}

func TestBuilderErrors(t *testing.T) {
	t.Parallel()
	var b Builder
	b.Literal("k:")
	b.String("order_id", "")
	_, err := b.Key()
	var e *Error
	if !errors.As(err, &e) || e.Code != EmptyField || e.Field != "order_id" {
		t.Fatalf("empty string: err = %v, want EMPTY_FIELD for order_id", err)
	}
	if !errors.Is(err, &Error{Code: EmptyField}) {
		t.Error("errors.Is does not match on code")
	}
	for _, n := range []int{MaxLen, MaxLen + 1} {
		var b Builder
		b.String("x", strings.Repeat("x", n))
		_, err := b.Key()
		if (n > MaxLen) != errors.Is(err, &Error{Code: KeyTooLong}) {
			t.Errorf("len %d: err = %v", n, err)
		}
	}
	// The limit is measured after encoding: 171 × ":" is 171 bytes raw
	// and 513 encoded.
	var long Builder
	long.String("x", strings.Repeat(":", 171))
	if _, err := long.Key(); !errors.Is(err, &Error{Code: KeyTooLong}) {
		t.Errorf("513 encoded bytes accepted: %v", err)
	}
	var ints Builder
	ints.Int(-9223372036854775808)
	ints.Literal("|")
	ints.Uint(18446744073709551615)
	ints.Literal("|")
	ints.Int(0)
	ints.Literal("|")
	ints.Bool(false)
	ints.Literal("|")
	ints.Enum("ORDER_STATE_UNSPECIFIED")
	if k, _ := ints.Key(); k != "-9223372036854775808|18446744073709551615|0|false|ORDER_STATE_UNSPECIFIED" {
		t.Errorf("scalars rendered %q", k)
	}
}
