//go:build corpus

package corpus_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/internal/corpus"
)

// TestRandomContracts is the property test: random contracts (keywords,
// support and module names, random identifiers, aliases,
// proto2/proto3/editions, deprecated files, messages, fields, enums and
// values, shared and own Java packages, nasty text and random comments on
// every element) either fail lint with positioned findings, or build
// cleanly in Go (go vet, and gofmt-stable), Java and Python and agree with
// the model on every derived case. The seed is
// fixed so failures reproduce; MSGCONTRACT_SEED explores others.
func TestRandomContracts(t *testing.T) {
	seed := uint64(20260101)
	if s := os.Getenv("MSGCONTRACT_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MSGCONTRACT_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("seed %d (rerun with MSGCONTRACT_SEED=%d)", seed, seed)
	root := t.TempDir()
	srcs := corpus.Random(seed, 16)
	files := writeSources(t, root, srcs)
	ctx := context.Background()
	set, err := corpus.Lint(ctx, root, files...)
	if err != nil {
		t.Fatalf("a generated contract does not compile (a bug in the generator of contracts): %v", err)
	}
	rejected := map[string]bool{}
	for _, d := range set.Diagnostics {
		if d.Pos.Line <= 0 || d.Pos.File == "" {
			t.Errorf("lint finding without a position: %v", d)
		}
		rel, _ := filepath.Rel(root, d.Pos.File)
		rejected[filepath.ToSlash(rel)] = true
		t.Logf("rejected by lint: %v", d)
	}
	var accepted []string
	for _, f := range files {
		if !rejected[f] {
			accepted = append(accepted, f)
		}
	}
	if len(accepted) < len(files)/2 {
		t.Fatalf("lint rejected %d of %d random contracts; the generator of contracts should mostly produce valid ones", len(files)-len(accepted), len(files))
	}
	set, err = corpus.Lint(ctx, root, accepted...)
	if err != nil || len(set.Diagnostics) > 0 {
		t.Fatalf("accepted contracts on their own: %v %v", err, set.Diagnostics)
	}
	cases, err := corpus.Vectors(set)
	if err != nil {
		t.Fatal(err)
	}
	report, err := corpus.Check(ctx, javaTools, root, accepted, cases, t.TempDir())
	t.Logf("%d random contracts, %d accepted, %d cases\n%s", len(files), len(accepted), len(cases), tail(report, 400))
	if err != nil {
		for _, f := range accepted {
			t.Logf("--- %s\n%s", f, srcs[f])
		}
		t.Fatal(strings.TrimSpace(err.Error()))
	}
}
