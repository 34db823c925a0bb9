package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkRegisterSynchronous prices synchronous=FULL, which the store
// uses so that an acknowledged id survives power loss, against NORMAL:
// one registration (one writer transaction) per iteration.
func BenchmarkRegisterSynchronous(b *testing.B) {
	for _, mode := range []string{"FULL", "NORMAL"} {
		b.Run(mode, func(b *testing.B) {
			st, err := open(filepath.Join(b.TempDir(), "registry.db"), mode)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				sc := Schema{Type: "PROTOBUF", Text: fmt.Sprintf("syntax = \"proto3\"; message M%d {}", i)}
				if _, err := st.Register(ctx, fmt.Sprintf("s%d", i%100), sc, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
