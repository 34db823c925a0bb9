package gcpolicy

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestLimitFollowsLiveHeap: with a live heap above Floor/Factor, the limit
// becomes Factor times it after a collection; it never goes below Floor.
// Not parallel: it sets the process's GC parameters.
func TestLimitFollowsLiveHeap(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	stop := Batch()
	defer stop()
	if got := debug.SetMemoryLimit(-1); got != Floor {
		t.Fatalf("limit %d before any collection, want Floor %d", got, Floor)
	}
	held := make([][]byte, 0, 64)
	for range 64 {
		held = append(held, make([]byte, 1<<20)) // 64 MiB live, 128 MiB > Floor
	}
	// The finalizer goroutine sets the limit after a collection; collect
	// until it has (a bounded number of times, no clock).
	got := int64(Floor)
	for i := 0; i < 100 && got <= Floor; i++ {
		runtime.GC()
		runtime.Gosched()
		got = debug.SetMemoryLimit(-1)
	}
	if got < 2*64<<20 || got > 2*80<<20 {
		t.Fatalf("limit %d MiB with 64 MiB live, want about %d", got>>20, int64(Factor*64))
	}
	runtime.KeepAlive(held)
	if Limit(1<<20) != Floor {
		t.Fatalf("Limit(1 MiB) = %d, want Floor", Limit(1<<20))
	}
}

// TestEnvironmentDecides: GOGC or GOMEMLIMIT in the environment leaves the
// runtime's settings alone.
func TestEnvironmentDecides(t *testing.T) {
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			t.Setenv(env, "123")
			old := debug.SetGCPercent(77)
			defer debug.SetGCPercent(old)
			limit := debug.SetMemoryLimit(-1)
			defer Batch()()
			if got := debug.SetGCPercent(77); got != 77 {
				t.Errorf("GOGC %d, want 77 untouched", got)
			}
			if got := debug.SetMemoryLimit(-1); got != limit {
				t.Errorf("limit %d, want %d untouched", got, limit)
			}
		})
	}
}

// TestRequest: a request of usual size turns the collector off under a
// memory limit that grows with the request; a large one gets GOGC 400 and
// no limit; GOGC in the environment leaves both alone.
// Not parallel: it sets the process's GC parameters.
func TestRequest(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	Request(645 << 10)
	if pct := debug.SetGCPercent(100); pct != -1 {
		t.Errorf("GOGC %d for a 645 KiB request, want off", pct)
	}
	limit := debug.SetMemoryLimit(math.MaxInt64)
	if limit != RequestLimit(645<<10) || limit < 64<<20+70*(645<<10) {
		t.Errorf("memory limit %d for a 645 KiB request, want %d", limit, RequestLimit(645<<10))
	}

	Request(NoGCRequest + 1)
	if pct := debug.SetGCPercent(100); pct != 400 {
		t.Errorf("GOGC %d for a request over %d bytes, want 400", pct, NoGCRequest)
	}
	if limit := debug.SetMemoryLimit(math.MaxInt64); limit != math.MaxInt64 {
		t.Errorf("memory limit %d for a large request, want none", limit)
	}

	t.Setenv("GOGC", "100")
	Request(645 << 10)
	if pct := debug.SetGCPercent(100); pct != 100 {
		t.Errorf("GOGC %d with GOGC=100 in the environment, want it left at 100", pct)
	}
	if limit := debug.SetMemoryLimit(math.MaxInt64); limit != math.MaxInt64 {
		t.Errorf("memory limit %d with GOGC=100 in the environment, want none", limit)
	}
}
