//go:build rabbitmq

// Package rabbitmqinterop_test checks runtime-go's RabbitMQ transport and the
// Python runtime's (msgcontract_runtime.rabbitmq) against each other on a
// real node (scripts/with-rabbitmq.sh): each declares what the other
// declared (a different argument would fail with 406), reads what the other
// published, shares one group queue with exactly-once effects, and reads the
// other's dead letters (the CLI's `msgcontract dlq list --rabbitmq` too).
// Run by `make test-rabbitmq-python`.
package rabbitmqinterop_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	paymentv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq/rabbitmqtest"
)

var root, _ = filepath.Abs("../..")

// python runs testdata/pyinterop.py with the project's .venv, where
// msgcontract-runtime[rabbitmq] is installed.
func python(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	py := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("%s: %v (make test-rabbitmq-python installs it)", py, err)
	}
	cmd := exec.Command(py, append([]string{filepath.Join(root, "integration/rabbitmqinterop/testdata/pyinterop.py")}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "runtime-python/tests_rabbitmq")+
		string(os.PathListSeparator)+filepath.Join(root, "runtime-python/src"))
	cmd.Stderr = os.Stderr
	return cmd
}

func runPy(t *testing.T, args ...string) string {
	t.Helper()
	out, err := python(t, args...).Output()
	if err != nil {
		t.Fatalf("pyinterop %s: %v\n%s", args[0], err, out)
	}
	return string(out)
}

func newTransport(t *testing.T, prefix string, topology map[string][]string) *rabbitmq.Transport {
	t.Helper()
	return rabbitmqtest.New(t, rabbitmq.Config{Prefix: prefix, Topology: topology})
}

func sqliteDB(t *testing.T) (*sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "biz.db")
	db, err := sqlitedb.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE effects (biz_key TEXT NOT NULL, who TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db, path
}

func runConsumer(t *testing.T, tr *rabbitmq.Transport, db *sql.DB, group, who string) {
	t.Helper()
	runConsumerFlaky(t, tr, db, group, who, nil)
}

// runConsumerFlaky runs a Go consumer of group whose handler fails (code
// 50301, retryable) the first time this member sees an order id that
// flaky accepts.
func runConsumerFlaky(t *testing.T, tr *rabbitmq.Transport, db *sql.DB, group, who string, flaky func(string) bool) {
	t.Helper()
	var seen sync.Map
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: tr, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	err = paymentv1.RegisterPaySuccessHandler(c, group+".pay", func(ctx context.Context, tx *sql.Tx, m *paymentv1.PaySuccess) error {
		if flaky != nil && flaky(m.OrderId) {
			if _, again := seen.LoadOrStore(m.OrderId, true); !again {
				return classify.NewError(50301, "ledger answered 503 (first sight in "+who+")")
			}
		}
		key, _ := m.BizKey()
		_, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, who) VALUES (?, ?)`, key, who)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

func effects(t *testing.T, db *sql.DB, where string) (n, distinct int) {
	t.Helper()
	if err := db.QueryRow(`SELECT count(*), count(DISTINCT biz_key) FROM effects`+where).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	return n, distinct
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("not reached within 2m: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPythonToGo: Python declares a member's queues first and publishes;
// the Go transport declares the same names (Topology and Subscribe, the
// delay queues 16 ms to 4096 ms included) without a 406, and its consumer
// applies every event once.
func TestPythonToGo(t *testing.T) {
	prefix := rabbitmqtest.Prefix()
	url := rabbitmqtest.URL(t)
	runPy(t, "declare", url, prefix, "payments")
	tr := newTransport(t, prefix, map[string][]string{"order-event": {"payments"}})
	db, _ := sqliteDB(t)
	runPy(t, "publish", url, prefix, t.TempDir(), "10")
	runConsumer(t, tr, db, "payments", "go")
	waitFor(t, "10 effects", func() bool { n, _ := effects(t, db, ""); return n >= 10 })
	time.Sleep(500 * time.Millisecond) // a duplicate effect would show now
	if n, d := effects(t, db, ""); n != 10 || d != 10 {
		t.Fatalf("effects = %d (%d distinct), want 10 once each", n, d)
	}
	if recs, err := tr.List(context.Background(), dlq.Filter{}); err != nil || len(recs) != 0 {
		t.Fatalf("dead letters = %v, %v; want none", recs, err)
	}
}

// TestGoToPythonSharedGroup: Go declares first and publishes 100 events
// twice each; a Go consumer and a Python RabbitMQConsumerLoop share group
// payments's queue and business database: every event applied exactly once,
// by both members between them. The 20 flaky-* orders fail the first time
// each member sees them, so retry copies (through the delay queues, under
// the other language's headers) reach either member and the retry chain
// spans both.
func TestGoToPythonSharedGroup(t *testing.T) {
	prefix := rabbitmqtest.Prefix()
	url := rabbitmqtest.URL(t)
	tr := newTransport(t, prefix, map[string][]string{"order-event": {"payments"}})
	db, path := sqliteDB(t)
	runConsumerFlaky(t, tr, db, "payments", "go", func(id string) bool { return strings.HasPrefix(id, "flaky-") })
	waitFor(t, "the dedup tables", func() bool {
		var n int
		return db.QueryRow(`SELECT count(*) FROM msg_dedup`).Scan(&n) == nil
	})
	stop := filepath.Join(t.TempDir(), "stop")
	py := python(t, "member", url, prefix, t.TempDir(), path, stop)
	stdout, err := py.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := py.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	defer func() {
		_ = os.WriteFile(stop, nil, 0o644)
		_ = py.Wait()
	}()
	if l := <-lines; l != "py: ready" {
		t.Fatalf("python member: %q", l)
	}
	ctx := context.Background()
	const n = 100
	var envs []*envelopepb.Envelope
	for i := range n {
		id := fmt.Sprintf("go-%d", i)
		if i%5 == 0 { // odd and even places: each member sees some first
			id = fmt.Sprintf("flaky-%d", i)
		}
		m := &paymentv1.PaySuccess{OrderId: id, Amount: int64(i), Currency: "EUR"}
		env, err := paymentv1.NewPaySuccessEnvelope(m, event.Options{})
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	for range 2 { // every event twice, the second round after the first
		for _, env := range envs {
			if err := tr.Publish(ctx, "order-event", env); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "100 effects and the queue drained", func() bool {
		e, _ := effects(t, db, "")
		b, err := tr.Backlog(ctx, "payments")
		return e >= n && err == nil && b == 0
	})
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var last string
	for l := range lines {
		last = l
	}
	if err := py.Wait(); err != nil {
		t.Fatalf("python member: %v", err)
	}
	t.Logf("python member: %s", last)
	if e, d := effects(t, db, ""); e != n || d != n {
		t.Fatalf("effects = %d (%d distinct), want %d once each", e, d, n)
	}
	goN, _ := effects(t, db, " WHERE who = 'go'")
	pyN, _ := effects(t, db, " WHERE who = 'py'")
	t.Logf("effects by go: %d, by python: %d", goN, pyN)
	if goN == 0 || pyN == 0 {
		t.Fatalf("one member did all the work (go %d, python %d): the queue was not shared", goN, pyN)
	}
	if f, d := effects(t, db, " WHERE biz_key LIKE 'order_id:flaky-%'"); f != 20 || d != 20 {
		t.Fatalf("flaky effects = %d (%d distinct), want 20 once each", f, d)
	}
	if !strings.Contains(last, "retried=") || strings.Contains(last, "retried=0 ") {
		t.Fatalf("the Python member retried nothing: %q", last)
	}
}

// TestDeadLettersAcrossLanguages: a Python dead letter is listed by the Go
// store and by `msgcontract dlq list --rabbitmq`, and a Go one by Python's
// store, in one P.dlq.
func TestDeadLettersAcrossLanguages(t *testing.T) {
	prefix := rabbitmqtest.Prefix()
	url := rabbitmqtest.URL(t)
	ctx := context.Background()
	runPy(t, "deadletter", url, prefix, t.TempDir())

	tr := newTransport(t, prefix, map[string][]string{"order-event": {"gogroup"}})
	db, _ := sqliteDB(t)
	runConsumer(t, tr, db, "gogroup", "go")
	if err := tr.PublishRaw(ctx, "order-event", []byte{0x0a, 0x01}); err != nil {
		t.Fatal(err)
	}
	var recs []dlq.Record
	waitFor(t, "the Go dead letter", func() bool {
		var err error
		recs, err = tr.List(ctx, dlq.Filter{})
		return err == nil && len(recs) == 2
	})
	byGroup := map[string]dlq.Record{}
	for _, r := range recs {
		byGroup[r.Group] = r
	}
	pyRec, ok := byGroup["payments"]
	if !ok || pyRec.Reason != dlq.ReasonDecode || pyRec.Topic != "order-event" || string(pyRec.Envelope) != "\x0a\x01" ||
		pyRec.DeadAt.IsZero() {
		t.Fatalf("the Python record as Go reads it: %+v", pyRec)
	}
	goRec := byGroup["gogroup"]

	// msgcontract runs its dlq command in msgcontract-ops beside it, as make build lays them out.
	binDir := t.TempDir()
	bin := filepath.Join(binDir, "msgcontract")
	for _, c := range []string{"msgcontract", "msgcontract-ops"} {
		build := exec.Command("go", "build", "-o", filepath.Join(binDir, c), "./cmd/"+c)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/%s: %v\n%s", c, err, out)
		}
	}
	out, err := exec.Command(bin, "dlq", "list", "--rabbitmq", url, "--prefix", prefix).CombinedOutput()
	if err != nil {
		t.Fatalf("msgcontract dlq list: %v\n%s", err, out)
	}
	t.Logf("msgcontract dlq list:\n%s", out)
	if !strings.Contains(string(out), pyRec.ID) || !strings.Contains(string(out), "payments") ||
		!strings.Contains(string(out), "2 records") {
		t.Fatalf("the CLI does not list the Python record %s:\n%s", pyRec.ID, out)
	}

	seen := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(runPy(t, "dlq", url, prefix)), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		seen[r["id"].(string)] = r
	}
	g, ok := seen[goRec.ID]
	if !ok || g["group"] != "gogroup" || g["reason"] != "decode" || g["envelope"] != "CgE=" {
		t.Fatalf("Python's store does not read the Go record %+v: %v", goRec, seen)
	}
	if _, ok := seen[pyRec.ID]; !ok || len(seen) != 2 {
		t.Fatalf("Python's store read %v", seen)
	}
}
