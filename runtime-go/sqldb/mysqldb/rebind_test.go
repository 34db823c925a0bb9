package mysqldb

import (
	"database/sql/driver"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestRebind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, out string
		order   []int
	}{
		{"SELECT 1", "SELECT 1", nil},
		{"SELECT ? FROM t", "SELECT ? FROM t", nil},
		{"INSERT INTO t VALUES ($1, $2)", "INSERT INTO t VALUES (?, ?)", []int{1, 2}},
		{"UPDATE t SET a = $2 WHERE b = $1 OR c = $2", "UPDATE t SET a = ? WHERE b = ? OR c = ?", []int{2, 1, 2}},
		{"SELECT $10, $1", "SELECT ?, ?", []int{10, 1}},
		{"SELECT '$1', $1", "SELECT '$1', ?", []int{1}},
		{`SELECT 'it''s $1', $1`, `SELECT 'it''s $1', ?`, []int{1}},
		{`SELECT 'a\'$1', $1`, `SELECT 'a\'$1', ?`, []int{1}},
		{`SELECT "a\"$1", "b""$2", $1`, `SELECT "a\"$1", "b""$2", ?`, []int{1}},
		{"SELECT `col$1`, $1", "SELECT `col$1`, ?", []int{1}},
		{"SELECT $1 -- $2\n, $3", "SELECT ? -- $2\n, ?", []int{1, 3}},
		{"SELECT $1 --$2", "SELECT ? --?", []int{1, 2}}, // "--" needs a space to start a comment
		{"SELECT $1 # $2\n", "SELECT ? # $2\n", []int{1}},
		{"SELECT /* $2 */ $1", "SELECT /* $2 */ ?", []int{1}},
		{"SELECT a$1, $1", "SELECT a$1, ?", []int{1}},
		{"SELECT $1a, $1", "SELECT $1a, ?", []int{1}},
		{"SELECT $0, $1", "SELECT $0, ?", []int{1}},
		{"SELECT '$1", "SELECT '$1", nil},
	}
	for _, c := range cases {
		out, order, err := Rebind(c.in)
		if err != nil {
			t.Errorf("Rebind(%q): %v", c.in, err)
			continue
		}
		if out != c.out || !reflect.DeepEqual(order, c.order) {
			t.Errorf("Rebind(%q) = %q %v, want %q %v", c.in, out, order, c.out, c.order)
		}
	}
	if _, _, err := Rebind("SELECT $1, ?"); err == nil || !strings.Contains(err.Error(), "mixes") {
		t.Errorf("mixed placeholders: %v", err)
	}
}

func TestReorder(t *testing.T) {
	t.Parallel()
	args := []driver.NamedValue{{Ordinal: 1, Value: "a"}, {Ordinal: 2, Value: int64(2)}}
	got, err := reorder([]int{2, 1, 2}, args)
	if err != nil {
		t.Fatal(err)
	}
	want := []driver.NamedValue{{Ordinal: 1, Value: int64(2)}, {Ordinal: 2, Value: "a"}, {Ordinal: 3, Value: int64(2)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reorder = %v, want %v", got, want)
	}
	if _, err := reorder([]int{3}, args); err == nil || !strings.Contains(err.Error(), "$3 but has 2 arguments") {
		t.Errorf("missing argument: %v", err)
	}
}

// FuzzRebind checks, for any statement, that Rebind only ever replaces
// $N tokens by ?: putting each $N back where a ? now stands gives the
// input again, the output has no placeholder left to rebind, and string
// literals, quoted identifiers and comments are never touched (each
// seed's literal survives byte for byte).
func FuzzRebind(f *testing.F) {
	for _, s := range []string{
		"INSERT INTO t (a, b) VALUES ($1, $2) ON DUPLICATE KEY UPDATE a = a",
		`SELECT 'x''$1\'', "$2", ` + "`$3`" + `, $4 -- $5` + "\n# $6\n/* $7 */ $8",
		"SELECT $1a, a$1, $0, $", "--$1", "'", "/*", "SELECT $99999999999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		out, order, err := Rebind(q)
		if err != nil {
			if !strings.Contains(q, "?") {
				t.Fatalf("Rebind(%q): %v, but it has no ?", q, err)
			}
			return
		}
		if order == nil {
			if out != q {
				t.Fatalf("Rebind(%q) changed a statement without placeholders to %q", q, out)
			}
			return
		}
		// Undo: each ? the rewrite produced stands where a $N was.
		ps, _ := scan(q)
		if len(ps) != len(order) {
			t.Fatalf("%d placeholders, %d in order", len(ps), len(order))
		}
		var back strings.Builder
		last, shift := 0, 0
		for i, p := range ps {
			at := p.start - shift
			if out[at] != '?' {
				t.Fatalf("Rebind(%q) = %q: no ? at %d", q, out, at)
			}
			back.WriteString(out[last:at])
			back.WriteString(q[p.start:p.end])
			if q[p.start:p.end] != "$"+strconv.Itoa(order[i]) {
				t.Fatalf("placeholder %q recorded as %d", q[p.start:p.end], order[i])
			}
			last = at + 1
			shift += p.end - p.start - 1
		}
		back.WriteString(out[last:])
		if back.String() != q {
			t.Fatalf("Rebind(%q) = %q, which does not map back", q, out)
		}
		if again, o2, err := Rebind(out); err != nil && !strings.Contains(out, "?") || err == nil && (o2 != nil || again != out) {
			t.Fatalf("Rebind(%q) = %q %v %v: the output still has placeholders", out, again, o2, err)
		}
	})
}
