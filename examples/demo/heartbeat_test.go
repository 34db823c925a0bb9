package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHeartbeat: a step longer than the interval prints a line per
// interval naming the step (without its parenthesis) and nothing once
// stopped; interval 0 prints nothing.
func TestHeartbeat(t *testing.T) {
	var out syncBuffer
	stop := heartbeat(&out, 20*time.Millisecond, "building the Java order service (javac -Werror)")
	time.Sleep(110 * time.Millisecond)
	stop()
	got := out.String()
	lines := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("want a line per 20ms in 110ms, got:\n%s", got)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "    ... still building the Java order service (") || strings.Contains(l, "javac") {
			t.Errorf("heartbeat line %q", l)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if out.String() != got {
		t.Errorf("heartbeat went on after stop:\n%s", out.String())
	}

	var none syncBuffer
	heartbeat(&none, 0, "x")()
	if none.String() != "" {
		t.Errorf("interval 0 printed %q", none.String())
	}
}

// TestHeartbeatScript: scripts/heartbeat.sh prints its line to stderr
// while the command runs, leaves stdout to the command and exits with
// the command's status.
func TestHeartbeatScript(t *testing.T) {
	cmd := exec.Command("bash", "../../scripts/heartbeat.sh", "step", "bash", "-c", "echo out; sleep 2.5; exit 3")
	cmd.Env = append(cmd.Environ(), "HEARTBEAT_SECONDS=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("exit: %v; want status 3 (stderr %q)", err, stderr.String())
	}
	if stdout.String() != "out\n" {
		t.Errorf("stdout %q, want the command's alone", stdout.String())
	}
	if n := strings.Count(stderr.String(), "step: still running ("); n < 1 || n > 3 {
		t.Errorf("stderr %q: want 1 to 3 heartbeat lines in 2.5s at 1s", stderr.String())
	}
}
