package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// TestPartitionCutsAndHeals checks the partition fault on a real namespace:
// a connection made inside it reaches a server outside through the bridge;
// while the namespace is cut, the connection carries nothing and a new one
// cannot be made; once healed, the same connection carries its bytes again
// (TCP retransmits them), as after a real partition. Needs root (ip netns),
// as make chaos FAULTS=partition does.
func TestPartitionCutsAndHeals(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the partition fault needs root (ip netns add); run as root, as make test does in CI")
	}
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	name := fmt.Sprintf("%s%ds%d", nsPrefix, os.Getpid(), 99)
	ns, err := newNetns(name, []string{echo.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	defer ns.close()

	c, err := dialIn(name, echo.Addr().String())
	if err != nil {
		t.Fatalf("dial the server from inside the namespace: %v", err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	roundTrip := func(msg string, wait time.Duration) error {
		if _, err := c.Write([]byte(msg + "\n")); err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(wait))
		got, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if got != msg+"\n" {
			return fmt.Errorf("echoed %q, want %q", got, msg)
		}
		return nil
	}
	if err := roundTrip("before", 5*time.Second); err != nil {
		t.Fatalf("before the cut: %v", err)
	}

	if err := ns.cut(); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip("during", 700*time.Millisecond); err == nil {
		t.Fatal("a round trip went through while the namespace was cut")
	}
	if c2, err := dialIn(name, echo.Addr().String()); err == nil {
		c2.Close()
		t.Fatal("a new connection was made while the namespace was cut")
	}

	if err := ns.heal(); err != nil {
		t.Fatal(err)
	}
	// The write made during the cut is delivered on retransmission, then
	// this one.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if got, err := r.ReadString('\n'); err != nil || got != "during\n" {
		t.Fatalf("after healing, the held write: %q, %v", got, err)
	}
	if err := roundTrip("after", 10*time.Second); err != nil {
		t.Fatalf("after healing: %v", err)
	}
}

// dialIn connects to addr from inside the named namespace.
func dialIn(name, addr string) (c net.Conn, err error) {
	if inErr := inNetns(name, func() { c, err = net.DialTimeout("tcp", addr, 500*time.Millisecond) }); inErr != nil {
		return nil, inErr
	}
	return c, err
}
