package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// restartBroker SIGKILLs the process named by the first of pidFiles (in
// dir), waits until every process they name has exited, and runs the
// broker's start script on dir again, which must print addr (the same
// ports, the same data). It returns how long the broker was gone.
func restartBroker(dir, script, addr string, pidFiles ...string) (time.Duration, error) {
	var pids []int
	for _, f := range pidFiles {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return 0, fmt.Errorf("the broker's pid file: %w", err)
		}
		p, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return 0, fmt.Errorf("the broker's pid file %s: %w", f, err)
		}
		pids = append(pids, p)
	}
	start := time.Now()
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		return 0, fmt.Errorf("kill the broker (pid %d): %w", pids[0], err)
	}
	for _, p := range pids {
		for syscall.Kill(p, 0) == nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
	cmd := exec.Command("bash", script, dir)
	cmd.Stderr = os.Stderr
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != addr {
		return 0, fmt.Errorf("restart the broker with %s %s: %v (address %q, want %q)", script, dir, err, out, addr)
	}
	return time.Since(start), nil
}
