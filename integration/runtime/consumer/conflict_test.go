package consumer_test

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

const conflictChildEnv = "MSGCONTRACT_TEST_CONFLICT_CHILD"

// A key conflict is recorded in the transaction that settles the losing
// message, so the record survives a SIGKILL right after that commit (the
// child process kills itself when the runtime logs the committed
// conflict, before the acknowledgement). The redelivered messages are
// deduplicated again, without a second record or a second effect.
func TestConflictRecordSurvivesSIGKILL(t *testing.T) {
	if dir := os.Getenv(conflictChildEnv); dir != "" {
		runConflictChild(t, dir)
		return
	}
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	db, queue := openConflictFiles(t, dir)
	spec := newSpec(fastPolicy)
	var ids []string
	for _, v := range []string{"first", "second"} {
		env, err := event.NewEnvelope(spec, wrapperspb.String(v), "order:7:PAID", event.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, env.GetMessageId())
		if err := queue.Publish(ctx, topic, env); err != nil {
			t.Fatal(err)
		}
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestConflictRecordSurvivesSIGKILL$", "-test.count=1")
	cmd.Env = append(os.Environ(), conflictChildEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child was not killed: %v\n%s", err, out)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want SIGKILL\n%s", err, out)
	}

	store, err := dedup.New(dedup.Config{DB: db, Dialect: sqldb.SQLite})
	if err != nil {
		t.Fatal(err)
	}
	assertOneConflict := func(when string) {
		t.Helper()
		cs, err := store.Conflicts(ctx, dedup.ConflictFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 1 {
			t.Fatalf("%s: %d conflict records, want 1: %+v", when, len(cs), cs)
		}
		c := cs[0]
		if c.BizKey != "order:7:PAID" || c.Handler != handlerName || c.PriorMessageID != ids[0] || c.MessageID != ids[1] ||
			c.PayloadHash == c.PriorPayloadHash || c.PayloadHash == "" || c.SeenAt.IsZero() || c.PriorClaimedAt.IsZero() {
			t.Errorf("%s: record %+v, want %s winning over %s", when, c, ids[0], ids[1])
		}
	}
	assertOneConflict("after the kill")
	if n, err := queue.Backlog(ctx, ""); err != nil || n != 2 {
		t.Fatalf("backlog after the kill = %d (%v), want 2: the kill came after the acknowledgement", n, err)
	}

	// A consumer started again settles the redeliveries.
	m, err := metrics.New(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	c := newConflictConsumer(t, db, queue, m, slog.New(slog.DiscardHandler))
	go func() { done <- c.Run(runCtx) }()
	waitFor(t, "the redeliveries to settle", func() bool { n, err := queue.Backlog(ctx, ""); return err == nil && n == 0 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	assertOneConflict("after the redelivery")
	var effects int
	if err := db.QueryRow(`SELECT count(*) FROM effects`).Scan(&effects); err != nil || effects != 1 {
		t.Errorf("effects = %d (%v), want 1", effects, err)
	}
}

func openConflictFiles(t *testing.T, dir string) (*sql.DB, *sqlitequeue.Transport) {
	t.Helper()
	db, err := sqlitedb.Open(filepath.Join(dir, "business.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS effects (biz_key TEXT NOT NULL, retry_count INTEGER NOT NULL, note TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	// The queue has a file of its own, so the acknowledgement is a write
	// of its own after the business commit.
	queue, err := sqlitequeue.Open(context.Background(), filepath.Join(dir, "queue.db"),
		sqlitequeue.Config{Lease: time.Second, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { queue.Close() })
	return db, queue
}

func newConflictConsumer(t *testing.T, db *sql.DB, queue *sqlitequeue.Transport, m *metrics.Prometheus, log *slog.Logger) *consumer.Consumer {
	t.Helper()
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: queue, Group: "g", Metrics: m,
		Logger: log, HandlerTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	err = consumer.Register(c, handlerName, newSpec(fastPolicy), func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			return insertEffect(ctx, tx, m.GetValue())
		})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runConflictChild consumes until the runtime logs a committed conflict,
// then SIGKILLs its own process.
func runConflictChild(t *testing.T, dir string) {
	db, queue := openConflictFiles(t, dir)
	c := newConflictConsumer(t, db, queue, nil, slog.New(killOnConflict{}))
	_ = c.Run(context.Background())
	t.Fatal("the consumer stopped without a conflict")
}

// killOnConflict is a slog handler that SIGKILLs the process when the
// runtime reports a recorded key conflict: the record's transaction has
// committed, the acknowledgement has not been written.
type killOnConflict struct{}

func (killOnConflict) Enabled(context.Context, slog.Level) bool { return true }
func (killOnConflict) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "msgcontract: key conflict recorded") {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
	return nil
}
func (h killOnConflict) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h killOnConflict) WithGroup(string) slog.Handler      { return h }
