package main

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkBatch is bench-runtime's batch mode and its bare loops as Go
// benchmarks, one op a message: run with a fixed count, e.g.
//
//	go test -run x -bench Batch -benchtime 50000x ./bench/runtime
//
// Each reports its wall time, CPU time and heap allocations a message of
// the consume span (publishing is not counted).
func BenchmarkBatch(b *testing.B) {
	const fetch = 256
	for _, bc := range []struct {
		name string
		run  func(ctx context.Context, path string, n int) (result, error)
	}{
		{"batch", func(ctx context.Context, path string, n int) (result, error) {
			return runRuntime(ctx, path, n, runtimeMode{fetch: fetch})
		}},
		{"bare-batch", func(ctx context.Context, path string, n int) (result, error) {
			return runBare(ctx, path, n, fetch, false)
		}},
		{"bare-batch-dedup", func(ctx context.Context, path string, n int) (result, error) {
			return runBare(ctx, path, n, fetch, true)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r, err := bc.run(context.Background(), filepath.Join(b.TempDir(), "business.db"), b.N)
			if err != nil {
				b.Fatal(err)
			}
			n := float64(b.N)
			b.ReportMetric(float64(r.consume.Nanoseconds())/n, "ns/msg")
			b.ReportMetric(float64(r.cpu.Nanoseconds())/n, "cpu-ns/msg")
			b.ReportMetric(float64(r.allocs)/n, "allocs/msg")
		})
	}
}
