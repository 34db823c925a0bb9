package redisfilter_test

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dedup/redisfilter"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/metrics"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// startRedis runs a real redis-server from PATH on a free loopback port.
func startRedis(t *testing.T) *redis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server); skipping the Redis prefilter test")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rc := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port)})
	t.Cleanup(func() { rc.Close() })
	deadline := time.Now().Add(30 * time.Second)
	for rc.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("redis did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return rc
}

func TestPrefilter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rc := startRedis(t)
	pf, err := redisfilter.New(redisfilter.Config{Client: rc})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db, err := sqlitedb.Open(filepath.Join(dir, "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE effects (biz_key TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	tr, err := sqlitequeue.Open(ctx, filepath.Join(dir, "q.db"), sqlitequeue.Config{PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	m, _ := metrics.New(prometheus.NewRegistry())
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: tr, Metrics: m, Prefilter: pf, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	spec := &event.Spec{Topic: "t", EventType: "E",
		Policy: backoff.Policy{BaseMs: 1, Multiplier: 1, MaxDelayMs: 1, MaxRetries: 0}}
	err = consumer.Register(c, "h", spec, func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, v *wrapperspb.StringValue) error {
			env, _ := consumer.EnvelopeFrom(ctx)
			if _, err := tx.ExecContext(ctx, `INSERT INTO effects VALUES ($1)`, env.GetBizKey()); err != nil {
				return err
			}
			if v.GetValue() == "fail" {
				return classify.NewError(1, "fails")
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	defer func() { cancel(); <-done }()

	count := func(v *prometheus.CounterVec) int { return int(testutil.ToFloat64(v.WithLabelValues("h", "E"))) }
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	publish := func(key, value string) {
		t.Helper()
		env, err := event.NewEnvelope(spec, wrapperspb.String(value), key, event.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Publish(ctx, "t", env); err != nil {
			t.Fatal(err)
		}
	}

	publish("k1", "ok")
	wait("processed", func() bool { return count(m.Processed) == 1 })
	// The claim is recorded after the commit, just after the count: wait
	// for it (a failed Record is logged, never recorded, so this times out).
	wait("the committed claim recorded", func() bool {
		_, _, found, err := pf.Lookup(ctx, "k1", "h")
		if err != nil {
			t.Fatalf("lookup: %v", err)
		}
		return found
	})
	// A different payload under the key goes to the database, which
	// records the conflict.
	publish("k1", "different")
	wait("conflict settled", func() bool { return count(m.KeyConflicts) == 1 })
	var conflicts int
	if err := db.QueryRow(`SELECT count(*) FROM msg_dedup_conflict`).Scan(&conflicts); err != nil || conflicts != 1 {
		t.Errorf("conflict records = %d (%v), want 1", conflicts, err)
	}
	if got := count(m.KeyConflicts); got != 1 {
		t.Errorf("key conflicts = %d, want 1", got)
	}
	// Remove the database claim: only the prefilter can dedup now.
	if _, err := db.Exec(`DELETE FROM msg_dedup`); err != nil {
		t.Fatal(err)
	}
	publish("k1", "ok")
	wait("deduped", func() bool { return count(m.Deduped) == 1 })
	var n int
	_ = db.QueryRow(`SELECT count(*) FROM effects`).Scan(&n)
	if n != 1 {
		t.Errorf("effects = %d, want 1", n)
	}
	// A failed (rolled back) attempt is never recorded.
	publish("k2", "fail")
	wait("dead-lettered", func() bool { return count(m.DeadLettered) == 1 })
	if _, _, found, _ := pf.Lookup(ctx, "k2", "h"); found {
		t.Error("a rolled-back claim was recorded in the prefilter")
	}
}
