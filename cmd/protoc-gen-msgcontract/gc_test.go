package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestSetGC: a request of usual size turns the collector off under a
// memory limit that grows with the request; a large one gets GOGC 400 and
// no limit.
func TestSetGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	setGC(645 << 10)
	if pct := debug.SetGCPercent(100); pct != -1 {
		t.Errorf("GOGC %d for a 645 KiB request, want off", pct)
	}
	limit := debug.SetMemoryLimit(math.MaxInt64)
	if limit != noGCLimit(645<<10) || limit < 64<<20+70*(645<<10) {
		t.Errorf("memory limit %d for a 645 KiB request, want %d", limit, noGCLimit(645<<10))
	}

	setGC(noGCRequest + 1)
	if pct := debug.SetGCPercent(100); pct != 400 {
		t.Errorf("GOGC %d for a request over %d bytes, want 400", pct, noGCRequest)
	}
	if limit := debug.SetMemoryLimit(math.MaxInt64); limit != math.MaxInt64 {
		t.Errorf("memory limit %d for a large request, want none", limit)
	}
}
