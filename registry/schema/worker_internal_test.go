package schema

import (
	"context"
	"testing"
)

// TestPoolReplacesDeadIdleWorker kills the idle worker from outside (an
// OOM killer, an operator): the next compilation gets a new worker
// instead of an error.
func TestPoolReplacesDeadIdleWorker(t *testing.T) {
	p, err := NewPool(1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Warm(); err != nil {
		t.Fatal(err)
	}
	w := <-p.idle
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = w.cmd.Wait()
	p.idle <- w
	if _, err := p.Parse(context.Background(), "x.proto", `syntax = "proto3"; message M { string a = 1; }`, nil, nil); err != nil {
		t.Fatalf("after the idle worker died: %v", err)
	}
	if st := p.Stats(); st.Started < 2 {
		t.Fatalf("stats %+v: want a second worker started", st)
	}
}
