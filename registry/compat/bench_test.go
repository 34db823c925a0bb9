package compat_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/compat"
)

// BenchmarkFullTransitive checks a contract against 100 earlier versions.
func BenchmarkFullTransitive(b *testing.B) {
	version := func(n int) string {
		var sb strings.Builder
		sb.WriteString(contractBase)
		sb.WriteString("message Extra {\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "  string f%d = %d;\n", i, i+1)
		}
		sb.WriteString("}\n")
		return sb.String()
	}
	history := make([]*model.Set, 100)
	for i := range history {
		history[i] = load(b, version(i+1))
	}
	next := load(b, version(101))
	for b.Loop() {
		if vs := compat.CheckLevel(compat.FullTransitive, history, next); len(vs) > 0 {
			b.Fatal(vs)
		}
	}
}

// BenchmarkFullTransitivePrepared checks a contract against 1,000 earlier
// versions prepared once, as the registry keeps them: version n has n
// fields, so the work grows with the square of the history.
func BenchmarkFullTransitivePrepared(b *testing.B) {
	version := func(n int) string {
		var sb strings.Builder
		sb.WriteString(contractBase)
		sb.WriteString("message Extra {\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "  string f%d = %d;\n", i, i+1)
		}
		sb.WriteString("}\n")
		return sb.String()
	}
	history := make([]*compat.Schema, 1000)
	for i := range history {
		history[i] = compat.Prepare(load(b, version(i+1)))
	}
	next := compat.Prepare(load(b, version(1001)))
	for b.Loop() {
		if vs := compat.CheckSchemas(compat.FullTransitive, history, next); len(vs) > 0 {
			b.Fatal(vs)
		}
	}
}
