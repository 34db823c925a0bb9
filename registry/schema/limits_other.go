//go:build unix && !linux

package schema

import (
	"syscall"
	"time"
)

func renice() { _ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, 19) }

// procCPU is not known outside Linux while a worker runs; ended workers
// are still counted.
func procCPU(int) time.Duration { return 0 }
