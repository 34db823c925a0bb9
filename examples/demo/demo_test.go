package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDemoInvariants runs the whole payment-callback scenario on a small
// order book, on each transport, and requires every invariant: each order
// paid exactly once, no duplicate effect, nothing lost, exactly the
// injected dead letters in both consumers, Go and Python reconciled, the
// breaking change rejected.
func TestDemoInvariants(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testDemo(t, "sqlite") })
	// The same scenario over an in-process NATS JetStream server: the Go
	// services use runtime-go's natsjs, the Python service nats-py.
	t.Run("nats", func(t *testing.T) { testDemo(t, "nats") })
}

func testDemo(t *testing.T, transport string) *Result {
	t.Chdir("../..")
	var out bytes.Buffer
	res, err := Run(context.Background(), Config{Orders: 12, Transport: transport, WorkDir: t.TempDir()}, &out)
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if !res.OK() {
		t.Fatalf("%s\n%s", res.Line(), out.String())
	}
	if res.Orders != 12 || res.UniqueKeys != 12+3+3+1 || res.Published <= res.UniqueKeys {
		t.Errorf("orders=%d unique=%d published=%d, want 12 orders, 19 unique events, duplicates published", res.Orders, res.UniqueKeys, res.Published)
	}
	if res.Go.deduped != res.Published-res.UniqueKeys || res.Py.deduped != res.Published-res.UniqueKeys {
		t.Errorf("deduped go=%d python=%d, want %d each", res.Go.deduped, res.Py.deduped, res.Published-res.UniqueKeys)
	}
	if !strings.HasPrefix(res.Line(), "demo: ok orders=12 paid_once=12 duplicates=0 lost=0 dead_lettered=2 reconciled=true") {
		t.Errorf("closing line %q", res.Line())
	}
	t.Logf("%s: %s in %.1fs", transport, res.Line(), res.Elapsed.Seconds())
	return res
}

func TestDemoRejectsUnknownTransport(t *testing.T) {
	if _, err := Run(context.Background(), Config{Orders: 12, Transport: "carrier-pigeon", WorkDir: t.TempDir()}, &bytes.Buffer{}); err == nil {
		t.Fatal("unknown transport accepted")
	}
}
