// Package gcpolicy sets the garbage collector up for a short batch run
// that allocates much and keeps a fair part of it: `msgcontract generate`.
//
// GOGC 400 alone lets the heap grow to five times what is live: few
// collections (cheap in CPU), but a peak RSS far above the live heap.
// Batch adds a soft memory limit that follows the live heap: after every
// collection it is Factor times the live heap, never below Floor. While
// the heap is small GOGC 400 decides (no extra collections); once it is
// big the limit holds it near Factor × live. The limit never falls below
// what is live, so the collector cannot thrash on a large input; it only
// collects as often as GOGC=(Factor-1)*100 would on the big heap.
package gcpolicy

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

const (
	// Percent is the GOGC of a batch run.
	Percent = 400
	// Floor is the smallest memory limit set, in bytes.
	Floor = 80 << 20
	// Factor is the limit's multiple of the live heap.
	Factor = 2.0
)

// Batch applies the policy unless GOGC or GOMEMLIMIT is set in the
// environment, which then decides alone. stop ends the limit's following
// (the settings stay as they are); a command need not call it.
func Batch() (stop func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	debug.SetGCPercent(Percent)
	debug.SetMemoryLimit(Floor)
	var (
		stopped atomic.Bool
		live    = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	)
	afterEachGC(func() bool {
		if stopped.Load() {
			return false
		}
		metrics.Read(live)
		debug.SetMemoryLimit(Limit(live[0].Value.Uint64()))
		return true
	})
	return func() { stopped.Store(true) }
}

// Limit is the memory limit for a live heap of live bytes.
func Limit(live uint64) int64 {
	return int64(math.Max(Factor*float64(live), Floor))
}

// sentinel is garbage whose finalizer runs after the collection that
// finds it; it is big enough not to share a tiny-allocator block.
type sentinel struct {
	_ *byte
	_ [16]byte
}

// afterEachGC calls f (on the finalizer goroutine) after every
// collection until f returns false.
func afterEachGC(f func() bool) {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		if f() {
			afterEachGC(f)
		}
	})
}
