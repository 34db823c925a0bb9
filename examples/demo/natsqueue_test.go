package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/codegen/model"
	pybuild "github.com/msgcontract/msgcontract/conformance/toolchain/python"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// TestPythonJetStreamAdapter checks the Python service's JetStream adapter
// (examples/python-consumer/natsqueue.py) against runtime-go's natsjs on
// one server, decision by decision, including the paths the demo's Python
// service never takes: a retry must come back on the group's own retry
// subject and reach no other group, a deferred message must come back
// after its delay, and a dead letter must be a record that Go's dlq.Store
// reads field for field and can replay.
func TestPythonJetStreamAdapter(t *testing.T) {
	t.Chdir("../..")
	// No deadline of our own: under load, mypy alone can take minutes;
	// go test's -timeout bounds the run.
	ctx := t.Context()
	work := t.TempDir()
	set, err := model.Load(ctx, model.Config{ImportPaths: []string{protoDir}}, paymentProto)
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{}
	for _, f := range []string{filepath.Join(pythonDir, "natsqueue.py"), "examples/demo/testdata/natsqueue_interop.py"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		extra[filepath.Base(f)] = string(src)
	}
	pb, err := pybuild.Compile(ctx, set, []string{protoDir}, filepath.Join(work, "python"), filepath.Join(work, "mypy-cache"), extra)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := openNATS(ctx, filepath.Join(work, "nats"))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()

	// The Python group's name has a dot, which consumer names map to "_"
	// on both sides. A Go group subscribes to the same topic.
	const pyGroup, goGroup, tp = "interop.py", "interop-go", "orders"
	for _, g := range []string{pyGroup, goGroup} {
		sub, err := tr.Subscribe(ctx, g, []string{tp})
		if err != nil {
			t.Fatal(err)
		}
		sub.Close()
	}
	bodies := map[string][]byte{}
	for _, key := range []string{"retry", "defer", "dead"} {
		env := &envelopepb.Envelope{MessageId: "id-" + key, BizKey: key, EventType: "INTEROP", Topic: tp,
			ContentType: "application/json", Payload: []byte(`{}`)}
		if bodies[key], err = envelope.Marshal(env); err != nil {
			t.Fatal(err)
		}
		if err := tr.PublishRaw(ctx, tp, bodies[key]); err != nil {
			t.Fatal(err)
		}
	}

	start := time.Now()
	var stderr bytes.Buffer
	cmd := pb.Command(ctx, filepath.Join(pb.Root, "natsqueue_interop.py"), tr.srv.URL(), pyGroup, tp)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s%s", err, out, stderr.String())
	}
	type redelivery struct {
		Subject, Topic string
		BizKey         string `json:"biz_key"`
		RetryCount     int    `json:"retry_count"`
		AfterMs        int    `json:"after_ms"`
	}
	got := map[string]redelivery{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var r redelivery
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("python output %q: %v", out, err)
		}
		got[r.BizKey] = r
	}
	if r := got["retry"]; r.Subject != "msgcontract.retry.interop_py.orders" || r.Topic != tp || r.RetryCount != 1 {
		t.Errorf("retry copy came back as %+v, want retry_count 1 on msgcontract.retry.interop_py.orders, topic %s", r, tp)
	}
	if r := got["defer"]; r.Subject != "msgcontract.topic.orders" || r.Topic != tp || r.RetryCount != 0 || r.AfterMs < 250 {
		t.Errorf("deferred message came back as %+v, want the original on msgcontract.topic.orders after about 300 ms", r)
	}
	if len(got) != 2 {
		t.Errorf("python saw %d redeliveries, want 2: %s", len(got), out)
	}

	recs, err := tr.List(ctx, dlq.Filter{Group: pyGroup})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d dead-letter records of %s, want 1: %+v", len(recs), pyGroup, recs)
	}
	rec := recs[0]
	want := dlq.Record{ID: rec.ID, Topic: tp, Group: pyGroup, Handler: "interop.handler", EventType: "INTEROP",
		BizKey: "dead", MessageID: "id-dead", Envelope: bodies["dead"], Reason: dlq.ReasonNonRetryable,
		Code: 40901, Error: "boom", Attempts: 1,
		FirstFailedAt: rec.FirstFailedAt, LastFailedAt: rec.LastFailedAt, DeadAt: rec.DeadAt}
	if rec.ID == "" {
		t.Error("record without an id")
	}
	if !reflect.DeepEqual(rec, want) {
		t.Errorf("dead-letter record\n got %+v\nwant %+v", rec, want)
	}
	for name, at := range map[string]time.Time{"first_failed_at": rec.FirstFailedAt, "last_failed_at": rec.LastFailedAt, "dead_at": rec.DeadAt} {
		if at.Before(start.Add(-time.Second)) || at.After(time.Now()) {
			t.Errorf("%s %v, want during the run (from %v)", name, at, start)
		}
	}

	// Everything the Python group fetched is settled; the Go group still
	// has exactly the three originals: Python's retry copy is not its own.
	if n, err := tr.Backlog(ctx, pyGroup); err != nil || n != 0 {
		t.Errorf("backlog of %s = %d, %v; want 0", pyGroup, n, err)
	}
	if n, err := tr.Backlog(ctx, goGroup); err != nil || n != 3 {
		t.Errorf("backlog of %s = %d, %v; want the 3 originals", goGroup, n, err)
	}
	// Go's tooling replays Python's record to the Python group only.
	if err := tr.Replay(ctx, rec.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := tr.Backlog(ctx, pyGroup); err != nil || n != 1 {
		t.Errorf("after replay, backlog of %s = %d, %v; want 1", pyGroup, n, err)
	}
	if n, err := tr.Backlog(ctx, goGroup); err != nil || n != 3 {
		t.Errorf("after replay, backlog of %s = %d, %v; want 3", goGroup, n, err)
	}
}
