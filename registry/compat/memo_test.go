package compat_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"

	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/compat/corpus"
)

// TestMemoMatchesCheck checks the current side of every corpus case
// against a history of four versions (the previous sides of the next three
// cases, then its own) at every level, with and without the CODE rules,
// through one Memo shared by all cases, twice: the memo's answers, first
// computed and then remembered, must equal CheckSchemas', violation by
// violation, with the version each is reported against.
func TestMemoMatchesCheck(t *testing.T) {
	cases, err := corpus.Load(corpusRoot)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	prevs := make([]*compat.Schema, len(cases))
	curs := make([]*compat.Schema, len(cases))
	for i, tc := range cases {
		prev, err := corpus.LoadDir(ctx, tc.Prev())
		if err != nil {
			t.Fatal(err)
		}
		cur, err := corpus.LoadDir(ctx, tc.Cur())
		if err != nil {
			t.Fatal(err)
		}
		prevs[i], curs[i] = compat.Prepare(prev), compat.Prepare(cur)
	}
	memo := compat.NewMemo(1 << 20)
	compared, nonEmpty := 0, 0
	for round := range 2 {
		for i, tc := range cases {
			var history []*compat.Schema
			var ids []int64
			for _, j := range []int{i + 1, i + 2, i + 3, i} {
				j %= len(cases)
				history = append(history, prevs[j])
				ids = append(ids, int64(j)) // a previous side's id is its case
			}
			fp := compat.Fingerprint(sha256.Sum256([]byte(tc.Name)))
			for _, level := range compat.Levels {
				for _, opts := range [][]compat.Option{nil, {compat.WithSource()}} {
					want := describe(compat.CheckSchemas(level, history, curs[i], opts...))
					got := describe(memo.CheckSchemas(level, history, ids, curs[i], fp, opts...))
					if !slices.Equal(got, want) {
						t.Fatalf("round %d, %s at %s: the memo answers\n%v\nthe check\n%v", round, tc.Name, level, got, want)
					}
					compared++
					if len(want) > 0 {
						nonEmpty++
					}
				}
			}
		}
	}
	hits, total := memo.Stats()
	t.Logf("%d checks compared (%d with violations); memo answered %d of %d pairs", compared, nonEmpty, hits, total)
	if hits < total/2 || nonEmpty < compared/4 {
		t.Fatalf("the second round should come from the memo (%d of %d pairs), and many checks find violations (%d of %d)", hits, total, nonEmpty, compared)
	}
}

func describe(vs []compat.Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%s (against %d, previous %v, element %s)", v, v.Against, v.Previous, v.Element)
	}
	return out
}
