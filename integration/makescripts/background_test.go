// Package makescripts tests the scripts make test schedules its suites
// with.
package makescripts

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const script = "../../scripts/background.sh"

// background runs scripts/background.sh with args and returns its output
// and exit code.
func background(t *testing.T, args ...string) (string, int) {
	t.Helper()
	out, err := exec.Command("bash", append([]string{script}, args...)...).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatalf("background.sh %v: %v", args, err)
	}
	return string(out), 0
}

// owner is a process standing in for make: alive until the test ends or
// kill is called.
func owner(t *testing.T) (pid string, kill func()) {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	kill = func() {
		if !done {
			done = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	t.Cleanup(kill)
	return strconv.Itoa(cmd.Process.Pid), kill
}

func TestBackgroundJobNicedAndReported(t *testing.T) {
	for _, tt := range []struct {
		name, cmd string
		nice      []string // start's --nice option, if any
		rc        int
		started   string // in start's output
		says      []string
	}{
		{"passes", `echo "at nice $(nice)"`, nil, 0, "lowest CPU priority", []string{"at nice 19"}},
		{"fails", `echo "at nice $(nice)"; echo broken >&2; exit 3`, nil, 3, "lowest CPU priority", []string{"at nice 19", "broken", "failed (exit 3)"}},
		// nice -n 0 keeps the caller's nice: this test's, 0 under make test.
		{"nice 0", `echo "at nice $(nice)"`, []string{"--nice", "0"}, 0, "started at nice 0", []string{"at nice " + ownNice(t)}},
	} {
		if autogroups() {
			// A session of its own is an autogroup of its own, which
			// shares the CPU with make's as an equal unless it is niced.
			tt.cmd = "cat /proc/self/autogroup; " + tt.cmd
			n := "19"
			if tt.nice != nil {
				n = tt.nice[1]
			}
			tt.says = append(tt.says, " nice "+n+"\n")
		}
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "bg")
			pid, _ := owner(t)
			args := append(append([]string{"start"}, tt.nice...), dir, pid, "--", "bash", "-c", tt.cmd)
			if out, rc := background(t, args...); rc != 0 || !strings.Contains(out, tt.started) {
				t.Fatalf("start: exit %d: %s", rc, out)
			}
			out, rc := background(t, "wait", dir)
			if rc != tt.rc {
				t.Fatalf("wait: exit %d, want %d: %s", rc, tt.rc, out)
			}
			for _, s := range tt.says {
				if !strings.Contains(out, s) {
					t.Errorf("wait's output lacks %q: %s", s, out)
				}
			}
		})
	}
}

// ownNice is this process's nice, as nice(1) prints it.
func ownNice(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("nice").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// autogroups reports whether the kernel groups each session's processes
// for the scheduler (CONFIG_SCHED_AUTOGROUP, enabled).
func autogroups() bool {
	b, err := os.ReadFile("/proc/sys/kernel/sched_autogroup_enabled")
	return err == nil && strings.TrimSpace(string(b)) == "1"
}

// A make that ends first (failed, interrupted) leaves nothing running.
func TestBackgroundJobStoppedWithItsOwner(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bg")
	pidFile := filepath.Join(t.TempDir(), "job.pid")
	pid, kill := owner(t)
	if out, rc := background(t, "start", dir, pid, "--", "bash", "-c", `echo $$ > `+pidFile+`; exec sleep 300`); rc != 0 {
		t.Fatalf("start: exit %d: %s", rc, out)
	}
	var job int
	for deadline := time.Now().Add(10 * time.Second); job == 0; time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 1 && b[len(b)-1] == '\n' {
			job, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the job never started")
		}
	}
	kill()
	out, rc := background(t, "wait", dir)
	if rc != 143 || !strings.Contains(out, "ended first; stopping") {
		t.Fatalf("wait after the owner ended: exit %d, want 143: %s", rc, out)
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(job, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("job %d still running after its owner ended", job)
		}
	}
}

func TestBackgroundUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"wait", filepath.Join(t.TempDir(), "never-started")},
		{"start", t.TempDir(), "1"},
		{"start", t.TempDir(), "999999999", "--", "true"},
		{"start", "--nice", "20", t.TempDir(), "1", "--", "true"},
		{"start", "--nice", "low", t.TempDir(), "1", "--", "true"},
		{"start", "--nice"},
	} {
		if out, rc := background(t, args...); rc != 2 {
			t.Errorf("background.sh %v: exit %d, want 2: %s", args, rc, out)
		}
	}
}

// A watchdog killed outright leaves no exit code: wait says so and fails
// rather than waiting for ever.
func TestBackgroundWatchdogKilled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bg")
	pid, _ := owner(t)
	if out, rc := background(t, "start", dir, pid, "--", "sleep", "300"); rc != 0 {
		t.Fatalf("start: exit %d: %s", rc, out)
	}
	var watchdog int
	for deadline := time.Now().Add(10 * time.Second); watchdog == 0; time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, "pid")); err == nil {
			watchdog, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the watchdog wrote no pid")
		}
	}
	// The whole group, the job with it: the test leaves nothing running.
	if err := syscall.Kill(-watchdog, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", script, "wait", dir).CombinedOutput()
	var ee *exec.ExitError
	if ctx.Err() != nil {
		t.Fatalf("wait still waiting 20 s after the watchdog was killed: %s", out)
	}
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "ended without an exit code") {
		t.Fatalf("wait after the watchdog was killed: %v: %s", err, out)
	}
}
