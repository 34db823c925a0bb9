package schema_test

import (
	"context"
	"testing"

	"github.com/msgcontract/msgcontract/registry/schema"
)

func BenchmarkParse(b *testing.B) {
	ctx := context.Background()
	fetch := fetcher(map[string]string{"money": dep})
	for b.Loop() {
		if _, err := schema.Parse(ctx, "pay.proto", root, refs, fetch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseWorker is BenchmarkParse through a warm worker process:
// compare the two ns/op for what isolating a compilation costs.
func BenchmarkParseWorker(b *testing.B) {
	ctx := context.Background()
	fetch := fetcher(map[string]string{"money": dep})
	pool := newPool(b, 1)
	if err := pool.Warm(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := pool.Parse(ctx, "pay.proto", root, refs, fetch); err != nil {
			b.Fatal(err)
		}
	}
}
