package keytemplate

import (
	"errors"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []Segment
		wantErr int // byte offset of the error, -1 for none
	}{
		{"plain", "order_id:{order_id}:PAY_SUCCESS", []Segment{
			{Literal: "order_id:", Offset: 0, Len: 9},
			{Path: []string{"order_id"}, Offset: 9, Len: 10},
			{Literal: ":PAY_SUCCESS", Offset: 19, Len: 12},
		}, -1},
		{"only placeholder", "{id}", []Segment{{Path: []string{"id"}, Offset: 0, Len: 4}}, -1},
		{"dotted", "{a.b_c.d1}", []Segment{{Path: []string{"a", "b_c", "d1"}, Offset: 0, Len: 10}}, -1},
		{"escaped braces", "{{x}}:{y}", []Segment{
			{Literal: "{x}:", Offset: 0, Len: 6},
			{Path: []string{"y"}, Offset: 6, Len: 3},
		}, -1},
		{"adjacent placeholders", "{a}{b}", []Segment{
			{Path: []string{"a"}, Offset: 0, Len: 3},
			{Path: []string{"b"}, Offset: 3, Len: 3},
		}, -1},
		{"empty template", "", nil, 0},
		{"empty placeholder", "k:{}", nil, 2},
		{"unclosed", "k:{order_id", nil, 2},
		{"unmatched close", "k:order}", nil, 7},
		{"bad ident", "{order-id}", nil, 1},
		{"leading digit", "{1x}", nil, 1},
		{"trailing dot", "{a.}", nil, 3},
		{"nested", "{a{b}}", nil, 2},
		{"space", "{ a }", nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tc.in)
			if tc.wantErr >= 0 {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("Parse(%q) error = %v, want *Error", tc.in, err)
				}
				if e.Offset != tc.wantErr {
					t.Fatalf("Parse(%q) error offset = %d (%s), want %d", tc.in, e.Offset, e.Msg, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

// FuzzParse checks that Parse never panics, that offsets stay inside the
// template, and that a parsed template formats back to an equivalent one.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"order_id:{order_id}:PAY_SUCCESS", "{{}}", "{a.b}", "{", "}", "{}", "x{{y}}z{w}", "\xff{a}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		segs, err := Parse(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(s) {
				t.Fatalf("Parse(%q) bad error %v", s, err)
			}
			return
		}
		for _, seg := range segs {
			if seg.Offset < 0 || seg.Offset+seg.Len > len(s) {
				t.Fatalf("Parse(%q) segment %+v out of range", s, seg)
			}
		}
		again, err := Parse(Format(segs))
		if err != nil {
			t.Fatalf("Parse(Format(Parse(%q))): %v", s, err)
		}
		if Format(again) != Format(segs) {
			t.Fatalf("round trip of %q: %q != %q", s, Format(again), Format(segs))
		}
	})
}
