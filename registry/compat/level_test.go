package compat_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/compat"
)

// TestTransitive: v2 deletes a field and reserves its number and name; v3
// drops the reservation and reuses the number with another type. Every
// level but NONE catches the dropped reservation against v2 (issue #16);
// the _TRANSITIVE levels also catch the reuse against v1.
func TestTransitive(t *testing.T) {
	t.Parallel()
	history := []*model.Set{
		load(t, `message M { int32 a = 1; string b = 2; }`),
		load(t, `message M { int32 a = 1; reserved 2; reserved "b"; }`),
	}
	next := load(t, `message M { int32 a = 1; int64 b = 2; }`)
	reservations := []string{compat.ReservedNameRemoved + "@1", compat.ReservedNumberRemoved + "@1"}
	for _, tc := range []struct {
		level compat.Level
		want  []string // RULE@against
	}{
		{level: compat.None},
		{level: compat.Backward, want: reservations},
		{level: compat.Forward, want: reservations},
		{level: compat.Full, want: reservations},
		{level: compat.BackwardTransitive, want: append([]string{compat.FieldTypeChanged + "@0"}, reservations...)},
		{level: compat.ForwardTransitive, want: append([]string{compat.FieldTypeChanged + "@0"}, reservations...)},
		{level: compat.FullTransitive, want: append([]string{compat.FieldTypeChanged + "@0"}, reservations...)},
	} {
		t.Run(string(tc.level), func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, v := range compat.CheckLevel(tc.level, history, next) {
				got = append(got, fmt.Sprintf("%s@%d", v.Rule.ID, v.Against))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
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

// TestRules: every rule has a category, a direction and a sentence, IDs
// are unique, and contract rules apply at every level but NONE.
func TestRules(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, r := range compat.Rules() {
		if seen[r.ID] || r.Category == "" || r.Breaks == 0 || r.Doc == "" {
			t.Errorf("rule %+v", r)
		}
		seen[r.ID] = true
		if r.Category == compat.Contract && r.Breaks != compat.BothWays {
			t.Errorf("contract rule %s must break both ways, so it applies at every level but NONE", r.ID)
		}
		if (r.Category == compat.Code) != (r.Breaks == compat.Source) {
			t.Errorf("rule %s: CODE rules, and only they, break generated code alone", r.ID)
		}
	}
}
