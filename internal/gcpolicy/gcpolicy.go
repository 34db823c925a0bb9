// Package gcpolicy sets the garbage collector up for a short batch run
// that allocates much and keeps a fair part of it: `msgcontract generate`
// (Batch) and one protoc plugin request (Request).
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
	// Floor is the smallest memory limit set, in bytes: between two and
	// three times the live peak of generate --with-pb on 200 files
	// (bench/codegen's corpus, 25-30 MiB since protoc-gen-go's files and
	// protocompile's source info are let go early). Generate's CPU and
	// peak RSS there, by floor: 64 MiB 519 ms, 68 MiB; 72 MiB 504 ms,
	// 75 MiB; 80 MiB 494 ms, 83 MiB (medians of 20 runs, alternating).
	// 72 leaves room under both of #21's goals (bench/codegen/README.md).
	Floor = 72 << 20
	// Factor is the limit's multiple of the live heap.
	Factor = 2.0
)

// Batch applies the policy unless GOGC or GOMEMLIMIT is set in the
// environment, which then decides alone. stop ends the limit's following
// (the settings stay as they are); a command need not call it.
func Batch() (stop func()) {
	if fromEnv() {
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

// fromEnv reports whether GOGC or GOMEMLIMIT is set in the environment,
// which then decides alone: no policy here overrides it.
func fromEnv() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" }

// NoGCRequest is the largest request, in bytes, that Request answers
// with the collector off.
const NoGCRequest = 4 << 20

// RequestLimit is the heap a request of size bytes may grow to before the
// collector runs: several times what answering it allocates in all (about
// 70 bytes per request byte on bench/codegen's corpus; its live heap is
// less than half of that), so in practice it never runs.
func RequestLimit(size int) int64 { return 64<<20 + 128*int64(size) }

// Request sets the collector for one plugin request of size bytes, unless
// GOGC or GOMEMLIMIT is set in the environment. A plugin run is a short
// batch that allocates much and keeps a good part of it, and a collection
// started on its heap costs more CPU (marking, on the other core too)
// than the memory it saves: with GOGC 400 the run's peak RSS was within
// 10% of never collecting, for 15% more CPU. So a request of usual size
// is answered with the collector off and RequestLimit as the bound; a
// larger one with GOGC Percent, as Batch starts.
func Request(size int) {
	if fromEnv() {
		return
	}
	if size > NoGCRequest {
		debug.SetGCPercent(Percent)
		return
	}
	debug.SetMemoryLimit(RequestLimit(size))
	debug.SetGCPercent(-1)
}
