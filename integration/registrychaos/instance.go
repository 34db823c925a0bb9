package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// instance is one `msgcontract-ops registry serve` process (with its
// schema workers) on a fixed address, so that a restart answers where the
// writers already send. It runs in a process group of its own, which kill
// SIGKILLs as a whole (a crashed machine takes the workers with it), and
// dies with this program (Pdeathsig).
type instance struct {
	name, addr string
	ops, dsn   string
	log        *os.File
	// client registers (with -request-timeout); reader reads after
	// recovery (with -read-timeout).
	client, reader *apiClient
	// inflight counts requests sent to the instance and not yet answered.
	inflight atomic.Int64

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

// freeAddr picks a free loopback port.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("pick a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func newInstance(name, ops, dsn, logPath string, writeTimeout, readTimeout time.Duration) (*instance, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("instance %s: %w", name, err)
	}
	return &instance{name: name, addr: addr, ops: ops, dsn: dsn, log: log,
		client: newAPIClient(addr, writeTimeout), reader: newAPIClient(addr, readTimeout)}, nil
}

// startTimeout bounds how long an instance may take to listen.
const startTimeout = 60 * time.Second

// start runs the server and returns once it listens (its "listening on"
// line), or with its exit or a timeout.
func (in *instance) start(ctx context.Context) error {
	cmd := exec.Command(in.ops, "registry", "serve", "--addr", in.addr, "--db", in.dsn)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = in.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("instance %s: start %s: %w (build it with make build)", in.name, in.ops, err)
	}
	fmt.Fprintf(in.log, "--- %s: started pid %d\n", time.Now().UTC().Format(time.RFC3339Nano), cmd.Process.Pid)
	listening := make(chan struct{})
	exited := make(chan struct{})
	in.mu.Lock()
	in.cmd, in.exited = cmd, exited
	in.mu.Unlock()
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			fmt.Fprintln(in.log, sc.Text())
			if !said && strings.Contains(sc.Text(), "listening on") {
				said = true
				close(listening)
			}
		}
		err := cmd.Wait()
		fmt.Fprintf(in.log, "--- %s: exited: %v\n", time.Now().UTC().Format(time.RFC3339Nano), err)
	}()
	t := time.NewTimer(startTimeout)
	defer t.Stop()
	select {
	case <-listening:
		return nil
	case <-exited:
		return fmt.Errorf("instance %s exited before it listened; see %s", in.name, in.log.Name())
	case <-t.C:
		in.kill()
		return fmt.Errorf("instance %s did not listen on %s within %s; see %s", in.name, in.addr, startTimeout, in.log.Name())
	case <-ctx.Done():
		in.kill()
		return ctx.Err()
	}
}

// signal sends sig to the server process. Its schema workers are left
// alone: were this program killed while the server is SIGSTOPped, the
// server dies (Pdeathsig) and its idle workers exit when their input
// closes, where stopped ones would linger.
func (in *instance) signal(sig syscall.Signal) error {
	in.mu.Lock()
	cmd := in.cmd
	in.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return fmt.Errorf("instance %s is not running", in.name)
	}
	fmt.Fprintf(in.log, "--- %s: harness sends %v\n", time.Now().UTC().Format(time.RFC3339Nano), sig)
	if err := syscall.Kill(cmd.Process.Pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("instance %s: %v: %w", in.name, sig, err)
	}
	return nil
}

// kill SIGKILLs the instance's process group and waits for the server to
// be reaped. It does nothing when the instance is not running.
func (in *instance) kill() {
	in.mu.Lock()
	cmd, exited := in.cmd, in.exited
	in.cmd = nil
	in.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// close kills the instance, if it runs, and closes its log.
func (in *instance) close() {
	in.kill()
	in.log.Close()
}
