package java

import "testing"

// The expectations are the accessor names protoc 29's Java generator
// emitted for these fields.
func TestCamel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"order_id", "OrderId"}, {"foo_1bar", "Foo1Bar"}, {"fooBar2x", "FooBar2X"}, {"_x", "X"},
		{"a__b", "AB"}, {"fOO", "FOO"}, {"Foo", "Foo"}, {"id2_c", "Id2C"}, {"q9z", "Q9Z"},
	} {
		if got := camel(tc.in, true); got != tc.want {
			t.Errorf("camel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestForbiddenAccessors(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"class": true, "serialized_size": true, "cached_size": true, "all_fields": true,
		"default_instance_for_type": true, "hash_code": false, "default_instance": false, "descriptor": false,
	} {
		got := forbiddenAccessors[name] || forbiddenAccessors[stripUnderscores(name)]
		if got != want {
			t.Errorf("forbidden(%q) = %v, want %v", name, got, want)
		}
	}
}

func stripUnderscores(s string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		if s[i] != '_' {
			out = append(out, s[i])
		}
	}
	return string(out)
}

func TestString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`a"b\c`, `"a\"b\\c"`}, {"\n\x01", `"\n\001"`}, {"é", `"\u00e9"`}, {"😀", `"\ud83d\ude00"`},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
