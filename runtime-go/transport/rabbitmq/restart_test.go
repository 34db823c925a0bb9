//go:build rabbitmq && rabbitmq_restart

package rabbitmq_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq/rabbitmqtest"
)

// TestBrokerKillAndRestart SIGKILLs the node (scripts/with-rabbitmq.sh's,
// so it runs alone: make test-rabbitmq runs it last, with -tags
// rabbitmq_restart) with messages waiting, one fetched and unacknowledged
// and one retry copy in a delay queue, starts it again on its data dir,
// and checks one Transport and subscription carry on: every message
// confirmed before or after the kill is delivered, the retry copy too;
// and a Transport started while the node was down waits for it.
func TestBrokerKillAndRestart(t *testing.T) {
	dir, start := os.Getenv("MSGCONTRACT_RABBITMQ_DIR"), os.Getenv("MSGCONTRACT_RABBITMQ_START")
	if dir == "" || start == "" {
		t.Fatal("MSGCONTRACT_RABBITMQ_DIR and MSGCONTRACT_RABBITMQ_START are not set: run it through scripts/with-rabbitmq.sh (make test-rabbitmq)")
	}
	ctx := context.Background()
	tr := rabbitmqtest.New(t, rabbitmq.Config{Lease: 10 * time.Second, ConnectTimeout: 2 * time.Second,
		Topology: map[string][]string{"r": {"g"}}})
	sub, err := tr.Subscribe(ctx, "g", []string{"r"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	publish := func(key string) error {
		return tr.Publish(ctx, "r", &envelopepb.Envelope{MessageId: key, BizKey: key, EventType: "E", Topic: "r"})
	}
	want := map[string]bool{}
	for i := range 100 {
		k := fmt.Sprint("before-", i)
		if err := publish(k); err != nil {
			t.Fatal(err)
		}
		want[k] = true
	}
	seen := map[string]bool{}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// 40 acknowledged, one retried through the 2 s delay queue, one held
	// unacknowledged across the kill.
	for got := 0; got < 42; {
		ds, err := sub.Fetch(fctx, 42-got)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			got++
			env, err := envelope.Unmarshal(d.Body)
			if err != nil {
				t.Fatal(err)
			}
			switch got {
			case 41:
				env.RetryCount, env.NotBefore = 1, time.Now().Add(3*time.Second).UnixMilli()
				if err := sub.Retry(ctx, d, env); err != nil {
					t.Fatal(err)
				}
			case 42: // left unacknowledged
			default:
				seen[env.GetBizKey()] = true
				if err := sub.Ack(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
		}
	}

	kill(t, dir)
	if err := publish("during"); err == nil {
		t.Fatal("a publish with the broker down reported success")
	} else {
		t.Logf("publish with the broker down: %v", err)
	}
	// A member starting while the node is down waits for it (New and
	// Subscribe retry within ConnectTimeout) instead of failing.
	late := make(chan error, 1)
	go func() {
		tr2, err := rabbitmq.New(ctx, rabbitmq.Config{URL: rabbitmqtest.URL(t), Prefix: rabbitmqtest.Prefix(),
			ConnectTimeout: time.Minute, Topology: map[string][]string{"r": {"g"}}})
		if err == nil {
			var sub2 interface{ Close() error }
			if sub2, err = tr2.Subscribe(ctx, "g", []string{"r"}); err == nil {
				sub2.Close()
			}
			tr2.Close()
		}
		late <- err
	}()
	restart(t, start, dir)
	if err := <-late; err != nil {
		t.Fatalf("a Transport started while the node was down: %v", err)
	}

	for i := range 100 {
		k := fmt.Sprint("after-", i)
		deadline := time.Now().Add(30 * time.Second)
		for err := publish(k); err != nil; err = publish(k) {
			if time.Now().After(deadline) {
				t.Fatalf("publish after the restart: %v", err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		want[k] = true
	}
	rctx, rcancel := context.WithTimeout(ctx, 60*time.Second)
	defer rcancel()
	for len(missing(want, seen)) > 0 {
		ds, err := sub.Fetch(rctx, 50)
		if rctx.Err() != nil {
			t.Fatalf("after the restart, never delivered: %v", missing(want, seen))
		}
		if err != nil {
			t.Logf("fetch while the node comes back: %v", err)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for _, d := range ds {
			env, err := envelope.Unmarshal(d.Body)
			if err != nil {
				t.Fatal(err)
			}
			seen[env.GetBizKey()] = true
			if err := sub.Ack(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func missing(want, seen map[string]bool) []string {
	var out []string
	for k := range want {
		if !seen[k] {
			out = append(out, k)
		}
	}
	return out
}

// kill SIGKILLs the node's Erlang VM and waits until its wrapper exited.
func kill(t *testing.T, dir string) {
	t.Helper()
	beam := pidIn(t, filepath.Join(dir, "node.pid"))
	wrapper := pidIn(t, filepath.Join(dir, "pid"))
	if err := syscall.Kill(beam, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the node's VM (pid %d): %v", beam, err)
	}
	for _, p := range []int{beam, wrapper} {
		for syscall.Kill(p, 0) == nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func restart(t *testing.T, start, dir string) {
	t.Helper()
	out, err := exec.Command("bash", start, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("restart the node: %v\n%s", err, out)
	}
}

func pidIn(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

// TestPublishersBlocked sets the node's memory alarm (rabbitmqctl
// set_vm_memory_high_watermark) and checks a publish fails within
// PublishTimeout with an error naming the alarm instead of hanging, the
// next one at once, and publishing resumes when the alarm clears.
func TestPublishersBlocked(t *testing.T) {
	dir := os.Getenv("MSGCONTRACT_RABBITMQ_DIR")
	if dir == "" {
		t.Fatal("MSGCONTRACT_RABBITMQ_DIR is not set: run it through scripts/with-rabbitmq.sh (make test-rabbitmq)")
	}
	ctx := context.Background()
	tr := rabbitmqtest.New(t, rabbitmq.Config{PublishTimeout: 2 * time.Second, Topology: map[string][]string{"b": {"g"}}})
	publish := func() error {
		return tr.Publish(ctx, "b", &envelopepb.Envelope{MessageId: "m", BizKey: "k", EventType: "E", Topic: "b"})
	}
	if err := publish(); err != nil {
		t.Fatal(err)
	}
	ctl(t, dir, "set_vm_memory_high_watermark", "absolute", "1MB")
	restored := false
	defer func() {
		if !restored {
			ctl(t, dir, "set_vm_memory_high_watermark", "absolute", "2GiB")
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	var err error
	for err = publish(); err == nil || !strings.Contains(err.Error(), "blocks publishers"); err = publish() {
		if time.Now().After(deadline) {
			t.Fatalf("publishing under a memory alarm: %v; want an error naming the alarm", err)
		}
	}
	t.Logf("publish under the alarm: %v", err)
	began := time.Now()
	if err := publish(); err == nil || time.Since(began) > time.Second {
		t.Fatalf("a second publish under the alarm: %v after %v; want an error at once", err, time.Since(began))
	}
	ctl(t, dir, "set_vm_memory_high_watermark", "absolute", "2GiB")
	restored = true
	deadline = time.Now().Add(20 * time.Second)
	for err := publish(); err != nil; err = publish() {
		if time.Now().After(deadline) {
			t.Fatalf("publishing after the alarm cleared: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ctl runs rabbitmqctl against the node of dir (scripts/rabbitmq-start.sh).
func ctl(t *testing.T, dir string, args ...string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "ports"))
	if err != nil {
		t.Fatal(err)
	}
	ports := strings.Fields(string(b))
	if len(ports) != 3 {
		t.Fatalf("%s/ports: %q", dir, b)
	}
	node := "msgcontract-test-" + ports[0] + "@localhost"
	cmd := exec.Command("/usr/lib/rabbitmq/bin/rabbitmqctl", append([]string{"-n", node}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "RABBITMQ_NODENAME="+node,
		"ERL_EPMD_PORT="+ports[2], "RABBITMQ_CONF_ENV_FILE="+filepath.Join(dir, "rabbitmq-env.conf"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rabbitmqctl %v: %v\n%s", args, err, out)
	}
}
