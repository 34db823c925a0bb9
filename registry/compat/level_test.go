package compat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/compat"
)

// TestTransitive: a number deleted with its reservation in v2 and reused
// with another type in v3 passes against v2 alone, and is caught against
// v1 by the transitive levels.
func TestTransitive(t *testing.T) {
	t.Parallel()
	history := []*model.Set{
		load(t, `message M { int32 a = 1; string b = 2; }`),
		load(t, `message M { int32 a = 1; reserved 2; reserved "b"; }`),
	}
	next := load(t, `message M { int32 a = 1; int64 b = 2; }`)
	for _, tc := range []struct {
		level   compat.Level
		want    string
		against int
	}{
		{level: compat.Backward},
		{level: compat.Full},
		{level: compat.None},
		{level: compat.BackwardTransitive, want: compat.FieldTypeChanged, against: 0},
		{level: compat.ForwardTransitive, want: compat.FieldTypeChanged, against: 0},
		{level: compat.FullTransitive, want: compat.FieldTypeChanged, against: 0},
	} {
		t.Run(string(tc.level), func(t *testing.T) {
			t.Parallel()
			vs := compat.CheckLevel(tc.level, history, next)
			if tc.want == "" {
				if len(vs) > 0 {
					t.Fatalf("want compatible, got %v", vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].Rule.ID != tc.want || vs[0].Against != tc.against {
				t.Fatalf("got %+v, want one %s against version index %d", vs, tc.want, tc.against)
			}
		})
	}
}

func TestParseLevel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want compat.Level
		dirs compat.Direction
		tr   bool
	}{
		{"backward", compat.Backward, compat.NewReadsOld, false},
		{" FORWARD ", compat.Forward, compat.OldReadsNew, false},
		{"Full_Transitive", compat.FullTransitive, compat.BothWays, true},
		{"NONE", compat.None, 0, false},
	} {
		l, err := compat.ParseLevel(tc.in)
		if err != nil || l != tc.want || l.Directions() != tc.dirs || l.Transitive() != tc.tr {
			t.Errorf("ParseLevel(%q) = %q (%v, transitive %v), %v", tc.in, l, l.Directions(), l.Transitive(), err)
		}
	}
	if _, err := compat.ParseLevel("SIDEWAYS"); err == nil {
		t.Error("SIDEWAYS parsed")
	}
}

// TestRulesDocumented: every rule has a category, a direction and a
// sentence, IDs are unique, and registry/README.md lists each one.
func TestRulesDocumented(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range compat.Rules() {
		if seen[r.ID] || r.Category == "" || r.Breaks == 0 || r.Doc == "" {
			t.Errorf("rule %+v", r)
		}
		seen[r.ID] = true
		if !strings.Contains(string(readme), "| `"+r.ID+"` |") {
			t.Errorf("registry/README.md does not list rule %s in its rules table", r.ID)
		}
		if r.Category == compat.Contract && r.Breaks != compat.BothWays {
			t.Errorf("contract rule %s must break both ways, so it applies at every level but NONE", r.ID)
		}
	}
}
