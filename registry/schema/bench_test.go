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
