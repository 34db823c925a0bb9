package compat_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/compat/corpus"
)

// corpusRoot is testdata/compat, relative to this package.
var corpusRoot = filepath.Join("..", "..", "testdata", "compat")

// TestCorpus checks every previous/current pair of the corpus at FULL and
// at every level its want file names, and that BACKWARD and FORWARD
// together find what FULL finds.
func TestCorpus(t *testing.T) {
	t.Parallel()
	cases, err := corpus.Load(corpusRoot)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 150 {
		t.Fatalf("the corpus has %d cases, want at least 150", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			prev, err := corpus.LoadDir(context.Background(), tc.Prev())
			if err != nil {
				t.Fatalf("prev: %v", err)
			}
			cur, err := corpus.LoadDir(context.Background(), tc.Cur())
			if err != nil {
				t.Fatalf("cur: %v", err)
			}
			history, next := []*compat.Schema{compat.Prepare(prev)}, compat.Prepare(cur)
			for level, want := range tc.Want {
				vs := compat.CheckSchemas(level, history, next)
				if got := ruleIDs(vs); !slices.Equal(got, want) {
					t.Errorf("%s: got %v, want %v\n%s", level, got, want, lines(vs))
				}
				for _, v := range vs {
					if v.Pos.Line <= 0 || v.Pos.Col <= 0 {
						t.Errorf("%s: violation without a position: %v", level, v)
					}
				}
			}
			full := ruleIDs(compat.CheckSchemas(compat.Full, history, next))
			split := ruleIDs(append(compat.CheckSchemas(compat.Backward, history, next), compat.CheckSchemas(compat.Forward, history, next)...))
			if !slices.Equal(full, split) {
				t.Errorf("FULL finds %v, BACKWARD and FORWARD together %v", full, split)
			}
			var code []string
			for _, v := range compat.CheckSchemas(compat.Full, history, next, compat.WithSource()) {
				if v.Rule.Category == compat.Code && !slices.Contains(code, v.Rule.ID) {
					code = append(code, v.Rule.ID)
				}
			}
			slices.Sort(code)
			if !slices.Equal(code, tc.Code) {
				t.Errorf("CODE: got %v, want %v", code, tc.Code)
			}
			if vs := compat.CheckSchemas(compat.None, history, next); len(vs) > 0 {
				t.Errorf("NONE reports %v", vs)
			}
		})
	}
}

func ruleIDs(vs []compat.Violation) []string {
	got := []string{}
	for _, v := range vs {
		if !slices.Contains(got, v.Rule.ID) {
			got = append(got, v.Rule.ID)
		}
	}
	slices.Sort(got)
	return got
}
