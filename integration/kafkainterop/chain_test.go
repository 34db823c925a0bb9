//go:build kafka

package kafkainterop_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	paymentv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1"
	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka/kafkatest"
)

// TestRetryChainPythonDiesGoTakesOver: a Python KafkaConsumerLoop member of group
// "recon" fails every PaySuccess on a PostgreSQL business database and
// SIGKILLs itself at its first retry of a retry copy: right after the
// broker acknowledged the next copy, before the offset commit
// ("published"), or just before publishing it, its chain row written
// ("advanced"). A Go member of the group, on the same database, takes over
// and fails them too. Each message must be dead-lettered once, after all
// its attempts, and the retry topic hold one copy of each attempt past the
// fork. "published" checks that Go stops the second copy of the attempt
// the Python member forked; "advanced" that Go names the record Python
// advanced as Python did (recordID), or Go would take its own redelivery
// for a stale copy and the message would never be dead-lettered.
//
// Parallel with TestPythonKafkaSuite: most of this test waits for the dead
// member's session to expire, and each run has a namespace and a schema of
// its own.
func TestRetryChainPythonDiesGoTakesOver(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"published", "advanced"} {
		t.Run(when, func(t *testing.T) { pythonDiesGoTakesOver(t, when) })
	}
}

// chainRetries is the retry policy both members use: pay_success_spec's in
// runtime-python/tests_kafka/conftest.py.
const chainRetries = 3

func pythonDiesGoTakesOver(t *testing.T, when string) {
	ns := kafkatest.Namespace()
	db, dsn := schemaDB(t, "kc_", ns)
	tr, err := kafka.New(context.Background(), kafka.Config{Brokers: kafkatest.Brokers(t), Namespace: ns,
		Partitions: 2, SessionTimeout: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := context.Background()
	const n = 6
	for i := range n {
		if err := paymentv1.PublishPaySuccess(ctx, tr, &paymentv1.PaySuccess{OrderId: fmt.Sprintf("o-%d", i), Amount: 1},
			event.Options{}); err != nil {
			t.Fatal(err)
		}
	}

	out, err := python(t, "member-dies", strings.Join(kafkatest.Brokers(t), ","), ns, t.TempDir(), dsn, when, "1").Output()
	t.Logf("python: %s", out)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL ||
		!strings.Contains(string(out), "killed "+when) {
		t.Fatalf("the Python member was to kill itself %s a retry: %v", when, err)
	}
	var chained int
	if err := db.QueryRow(`SELECT count(*) FROM msg_dedup_chain WHERE attempt >= 1`).Scan(&chained); err != nil || chained == 0 {
		t.Fatalf("the Python member advanced no chain past attempt 0: %d, %v", chained, err)
	}

	runFailingConsumer(t, tr, db)
	var dead []dlq.Record
	waitFor(t, fmt.Sprintf("%d dead letters and the group drained", n), func() bool {
		dead, err = tr.List(ctx, dlq.Filter{Topic: "order-event"})
		return err == nil && len(dead) >= n && drained(t, tr, "recon")()
	})
	time.Sleep(4 * time.Second) // a forked chain's dead letter comes within its retry delays (0.2+0.4+0.8 s)
	if dead, err = tr.List(ctx, dlq.Filter{Topic: "order-event"}); err != nil {
		t.Fatal(err)
	}
	raw := readTopic(t, ns+"order-event.dlq")
	ids := map[string]int{}
	for _, r := range dead {
		ids[r.MessageID]++
		if r.Attempts != chainRetries+1 || r.Reason != dlq.ReasonRetriesExhausted || r.Handler != "recon.pay" {
			t.Errorf("dead letter %s: attempts %d, reason %s, handler %s", r.MessageID, r.Attempts, r.Reason, r.Handler)
		}
	}
	if len(dead) != n || len(ids) != n || len(raw) != n {
		t.Fatalf("%d dead letters listed, %d records in T.dlq, for %d messages (want %d each): %v",
			len(dead), len(raw), len(ids), n, ids)
	}

	// The retry topic: attempts 1 to chainRetries of every message, and a
	// second copy of an attempt only where the Python member forked it.
	copies := map[string]int{}
	for _, r := range readTopic(t, ns+"order-event.retry.recon") {
		env, err := envelope.Unmarshal(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		copies[fmt.Sprintf("%s/%d", env.GetMessageId(), env.GetRetryCount())]++
	}
	twice := 0
	for k, c := range copies {
		if c > 2 || (c == 2 && when == "advanced") {
			t.Errorf("retry copy %s: %d copies", k, c)
		}
		if c == 2 {
			twice++
		}
	}
	if len(copies) != n*chainRetries || twice > 1 {
		t.Fatalf("retry copies (message/attempt: copies) %v: want %d, one copy each but one forked", copies, n*chainRetries)
	}
}

// runFailingConsumer runs a Go member of group "recon" whose PaySuccess
// handler "recon.pay" always fails retryably, under chainRetries retries.
func runFailingConsumer(t *testing.T, tr *kafka.Transport, db *sql.DB) {
	t.Helper()
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.Postgres, Subscriber: tr, Group: "recon"})
	if err != nil {
		t.Fatal(err)
	}
	spec := *paymentv1.PaySuccessSpec
	spec.Policy = backoff.Policy{BaseMs: 200, Multiplier: 2, MaxDelayMs: 2000, MaxRetries: chainRetries}
	err = consumer.Register(c, "recon.pay", &spec, func() *paymentv1.PaySuccess { return &paymentv1.PaySuccess{} },
		func(ctx context.Context, tx *sql.Tx, m *paymentv1.PaySuccess) error {
			return classify.NewError(50301, "ledger answered 503")
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

// readTopic returns every record of topic, from its start to its end now.
func readTopic(t *testing.T, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkatest.Brokers(t)...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
		}
	})
	var out []*kgo.Record
	for len(left) > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%s: %d records read, partitions left %v", topic, len(out), left)
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, r)
			if end, ok := left[r.Partition]; ok && r.Offset+1 >= end {
				delete(left, r.Partition)
			}
		})
	}
	return out
}
