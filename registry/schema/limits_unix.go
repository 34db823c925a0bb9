//go:build unix

package schema

import (
	"runtime/debug"
	"syscall"
	"time"
)

// limitSelf puts a worker at nice 19 and under its CPU and address-space
// limits.
func limitSelf() {
	renice()
	cpu := uint64(cpuLimit / time.Second)
	_ = syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: cpu, Max: cpu + 5})
	_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: MemoryLimit, Max: MemoryLimit})
	// Collect harder before the address space runs out.
	debug.SetMemoryLimit(MemoryLimit / 2)
}

// selfCPU is the CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
