package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
)

// childEnv names the store a re-executed benchmark binary serves, so that
// the server's CPU time and memory are its own process's.
const childEnv = "REGISTRY_BENCH_SERVE_DB"

// inProcessEnv makes the child server compile in process
// (-in-process-compile).
const inProcessEnv = "REGISTRY_BENCH_IN_PROCESS"

// benchToken is the bearer token of the child server.
const benchToken = "bench-token"

// serveChild runs the registry on a free loopback port, prints its URL on
// stdout and serves until killed.
func serveChild(db string) error {
	st, err := store.Open(db)
	if err != nil {
		return err
	}
	cfg := api.Config{Store: st, Token: benchToken}
	if os.Getenv(inProcessEnv) == "" {
		// As `msgcontract registry serve` does: request schemas compile
		// in worker processes.
		pool, err := schema.NewPool(api.DefaultMaxCompilations() + 1)
		if err != nil {
			return err
		}
		if err := pool.Warm(); err != nil {
			return err
		}
		cfg.Workers = pool
	}
	srv, err := api.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s\n", ln.Addr())
	return (&http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
}

// child is a registry server in its own process.
type child struct {
	cmd     *exec.Cmd
	url     string
	started time.Duration // from exec to the first answered request
}

// startChild serves db from a re-executed copy of this binary.
func startChild(db string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"="+db)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("the child server printed no address: %w", err)
	}
	c := &child{cmd: cmd, url: strings.TrimSpace(line)}
	if _, err := call(http.DefaultClient, "GET", c.url+"/subjects", nil); err != nil {
		c.stop()
		return nil, err
	}
	c.started = time.Since(t0)
	return c, nil
}

func (c *child) stop() {
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

// cpu is the child's user+system CPU time so far, with that of the
// compilation workers it has reaped and of those still running, from /proc.
func (c *child) cpu() (time.Duration, error) {
	pid := c.cmd.Process.Pid
	own, _, err := procCPU(pid)
	if err != nil {
		return 0, err
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == pid {
			continue
		}
		t, ppid, err := procCPU(n)
		if err == nil && ppid == pid { // a live worker: gone since the listing is fine
			own += t
		}
	}
	return own, nil
}

// procCPU reads /proc/PID/stat: the process's user+system CPU time with
// that of its reaped children, and its parent's pid.
func procCPU(pid int) (time.Duration, int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ppid, _ := strconv.Atoi(f[1])
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		v, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += v
	}
	const hz = 100 // USER_HZ on Linux
	return time.Duration(ticks) * time.Second / hz, ppid, nil
}

// rss is the child's resident memory in bytes, from /proc.
func (c *child) rss() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", c.cmd.Process.Pid)
}
