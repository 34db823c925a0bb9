package sqlitequeue

import "testing"

func TestIDList(t *testing.T) {
	for _, c := range []struct {
		ids  []int64
		want string
	}{{nil, "[]"}, {[]int64{7}, "[7]"}, {[]int64{1, 22, -3, 9007199254740993}, "[1,22,-3,9007199254740993]"}} {
		if got := idList(c.ids); got != c.want {
			t.Errorf("idList(%v) = %s, want %s", c.ids, got, c.want)
		}
	}
}
