package schema

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// renice puts this process at nice 19. Linux niceness is per thread and
// new threads inherit their creator's, so every thread the runtime has
// started so far is reniced.
func renice() {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, 0, 19)
		return
	}
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, 19)
		}
	}
}

// procCPU is the CPU time process pid has used so far, from
// /proc/pid/stat (utime and stime, in clock ticks of 1/100 s).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	// The command name may hold spaces; fields resume after its ')'.
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * (time.Second / 100)
}
