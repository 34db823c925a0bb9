package benchstat

import (
	"fmt"
	"syscall"
	"time"
)

// CPU is the process's CPU time so far (user and system, all threads). The
// difference over a measured span is what the span cost in CPU, a figure
// that other work on a shared machine disturbs less than wall time.
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PerMessage formats d spent on n messages as "X.X µs CPU/msg".
func PerMessage(d time.Duration, n int) string {
	return fmt.Sprintf("%.1f µs CPU/msg", float64(d.Microseconds())/float64(n))
}
