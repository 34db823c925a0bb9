package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The partition fault. Each consumer slot that can be cut off runs in a
// network namespace of its own (ip netns exec), whose only interface is
// its loopback. Inside it, on the same 127.0.0.1 ports as outside, a bridge
// the parent holds listens for the broker and the database, and forwards
// each connection to the real server in the parent's namespace: the child
// uses the addresses it would use anyway (Kafka's advertised listener
// included). A partition takes the namespace's loopback down, so the
// child's packets to the broker and the database go nowhere, while the
// child runs on (its timers fire, its sessions expire); healing brings it
// up again and retransmissions resume. Only namespaces and sockets this
// run made are touched: the host's network is not.

// nsPrefix names this run's namespaces: mcchaos<parent pid>s<slot>.
const nsPrefix = "mcchaos"

// netns is one slot's namespace and its bridge.
type netns struct {
	name string
	lns  []net.Listener

	mu    sync.Mutex
	conns map[net.Conn]bool
}

// newNetns creates the namespace name with its loopback up and bridges
// each of addrs (host:port on loopback) into it.
func newNetns(name string, addrs []string) (*netns, error) {
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ip netns add %s (the partition fault needs root and iproute2): %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	n := &netns{name: name, conns: map[net.Conn]bool{}}
	if err := n.link("up"); err != nil {
		n.close()
		return nil, err
	}
	for _, a := range addrs {
		ln, err := listenIn(name, a)
		if err != nil {
			n.close()
			return nil, fmt.Errorf("bridge %s into namespace %s: %w", a, name, err)
		}
		n.lns = append(n.lns, ln)
		go n.serve(ln, a)
	}
	return n, nil
}

// command wraps argv to run inside the namespace.
func (n *netns) command(argv ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.name}, argv...)...)
}

// cut and heal take the namespace's loopback down and up.
func (n *netns) cut() error  { return n.link("down") }
func (n *netns) heal() error { return n.link("up") }

func (n *netns) link(state string) error {
	if out, err := exec.Command("ip", "-n", n.name, "link", "set", "lo", state).CombinedOutput(); err != nil {
		return fmt.Errorf("ip -n %s link set lo %s: %v: %s", n.name, state, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// serve forwards each connection accepted inside the namespace to addr
// outside it.
func (n *netns) serve(ln net.Listener, addr string) {
	for {
		in, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // the namespace's loopback is down, say
		}
		go n.forward(in, addr)
	}
}

func (n *netns) forward(in net.Conn, addr string) {
	out, err := net.Dial("tcp", addr)
	if err != nil {
		in.Close() // the server is down (a broker restart): the child sees a reset, as it would
		return
	}
	n.mu.Lock()
	n.conns[in], n.conns[out] = true, true
	n.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
	<-done
	in.Close()
	out.Close()
	n.mu.Lock()
	delete(n.conns, in)
	delete(n.conns, out)
	n.mu.Unlock()
}

// close stops the bridge and deletes the namespace.
func (n *netns) close() {
	for _, ln := range n.lns {
		ln.Close()
	}
	n.mu.Lock()
	for c := range n.conns {
		c.Close()
	}
	n.mu.Unlock()
	_ = exec.Command("ip", "netns", "delete", n.name).Run()
}

// listenIn opens a TCP listener on addr inside the named namespace.
func listenIn(name, addr string) (ln net.Listener, err error) {
	inErr := inNetns(name, func() { ln, err = net.Listen("tcp", addr) })
	if inErr != nil {
		if ln != nil {
			ln.Close()
		}
		return nil, inErr
	}
	return ln, err
}

// inNetns runs fn on a thread inside the named namespace. A socket stays
// in the namespace it was made in, so the thread enters the namespace only
// for fn; a thread that cannot return to the parent's namespace is left
// locked, and Go discards it when its goroutine ends.
func inNetns(name string, fn func()) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			done <- err
			return
		}
		defer home.Close()
		target, err := os.Open("/run/netns/" + name)
		if err != nil {
			done <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns into %s: %w", name, err)
			return
		}
		fn()
		if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- fmt.Errorf("setns back from %s: %w", name, err)
			return // the thread stays locked: Go retires it
		}
		runtime.UnlockOSThread()
		done <- nil
	}()
	return <-done
}

// sweepNetns deletes namespaces left by earlier runs whose parent is gone
// (one SIGKILLed before it could clean up).
func sweepNetns() {
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest, ok := strings.CutPrefix(name, nsPrefix)
		if !ok {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "s")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || unix.Kill(pid, 0) == nil {
			continue
		}
		_ = exec.Command("ip", "netns", "delete", name).Run()
	}
}

// hostPort returns the host:port of a URL or DSN such as
// postgres://u@127.0.0.1:5432/db, nats://127.0.0.1:4222,
// u:p@tcp(127.0.0.1:3306)/db or a bare 127.0.0.1:9092.
func hostPort(s string) string {
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.IndexAny(s, "/?"); i >= 0 {
		s = s[:i]
	}
	// go-sql-driver/mysql's form: user:password@tcp(host:port)/db.
	if inner, ok := strings.CutPrefix(s, "tcp("); ok {
		s = strings.TrimSuffix(inner, ")")
	}
	return s
}

// bridgeAddrs lists the servers a child reaches over the network: the
// broker and the business database.
func bridgeAddrs(cfg config) []string {
	var addrs []string
	switch cfg.transport {
	case "kafka":
		addrs = append(addrs, strings.Split(os.Getenv(envBrokers), ",")...)
	case "nats":
		addrs = append(addrs, hostPort(cfg.natsURL))
	case "rabbitmq":
		addrs = append(addrs, hostPort(os.Getenv(envRabbitURL)))
	case "rocketmq":
		addrs = append(addrs, os.Getenv(envRocketNamesrv), os.Getenv(envRocketBroker))
	}
	for _, dsn := range []string{cfg.pgDSN, cfg.mysqlDSN} {
		if dsn != "" {
			addrs = append(addrs, hostPort(dsn))
		}
	}
	return addrs
}
