package consumer_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// matrixEntry is one (database, transport, mode) of the fault matrix.
type matrixEntry = struct {
	db    dbBackend
	br    brokerKind
	batch bool
}

// matrix is every (database, transport) pair tests 1, 2, 3 and 7 run on;
// -tags kafka, -tags rabbitmq and -tags mysql add theirs.
// A batch entry runs the consumer in its default mode (one transaction per
// fetch, a savepoint per handler); the others with PerMessageTx.
func matrix() []matrixEntry {
	return append([]matrixEntry{
		{sqliteBackend, sqliteBroker, false},
		{sqliteBackend, sqliteBroker, true},
		{sqliteBackend, sharedSQLiteBroker, true},
		{postgresBackend, sqliteBroker, false},
		{postgresBackend, sqliteBroker, true},
		{sqliteBackend, natsBroker, false},
	}, append(append(kafkaMatrix(), rabbitmqMatrix()...), mysqlMatrix()...)...)
}

func forMatrix(t *testing.T, run func(t *testing.T, be dbBackend, bk brokerKind)) {
	for _, m := range matrix() {
		name := m.db.name + "+" + m.br.name
		if m.batch {
			name += "+batch"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if m.batch {
				batchMode.Store(t.Name(), true)
			}
			run(t, m.db, m.br)
		})
	}
}

// batchMode marks the tests whose consumers share a transaction per fetch.
var batchMode sync.Map

// Fault 1: the same message delivered to 32 goroutines at once gives
// exactly one business effect and 31 dedups.
func TestFault1ConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	forMatrix(t, func(t *testing.T, be dbBackend, bk brokerKind) {
		f := newFixture(t, be, bk, fastPolicy)
		env := f.envelope("order:1", "pay")
		for range 32 {
			f.publish(env)
		}
		f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			return insertEffect(ctx, tx, m.GetValue())
		}, func(c *consumer.Config) { c.Workers = 32 })
		waitFor(t, "32 deliveries settled", func() bool { return f.count(f.m.Processed)+f.count(f.m.Deduped) == 32 })
		f.drain()
		if got := f.effects(); got != 1 {
			t.Errorf("effects = %d, want 1", got)
		}
		if got := f.count(f.m.Processed); got != 1 {
			t.Errorf("processed = %d, want 1", got)
		}
		if got := f.count(f.m.Deduped); got != 31 {
			t.Errorf("deduped = %d, want 31", got)
		}
		if got := f.count(f.m.KeyConflicts); got != 0 {
			t.Errorf("key conflicts = %d, want 0", got)
		}
	})
}

// Fault 2: a handler failing with a retryable code three times, then
// succeeding, has one effect, and its not_before values follow the backoff
// schedule of the (fake) clock.
func TestFault2RetryThenSucceed(t *testing.T) {
	t.Parallel()
	forMatrix(t, func(t *testing.T, be dbBackend, bk brokerKind) {
		f := newFixture(t, be, bk, fastPolicy)
		f.clock = newScaledClock(10) // 10x: the 100..400 ms delays pass in tens of ms
		var (
			mu   sync.Mutex
			seen []*envelopepb.Envelope
			late []string
		)
		f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			env, _ := consumer.EnvelopeFrom(ctx)
			mu.Lock()
			seen = append(seen, proto.Clone(env).(*envelopepb.Envelope))
			if now := f.now().UnixMilli(); now < env.GetNotBefore() {
				late = append(late, fmt.Sprintf("retry %d ran at %d before not_before %d", env.GetRetryCount(), now, env.GetNotBefore()))
			}
			mu.Unlock()
			if env.GetRetryCount() < 3 {
				return classify.Errorf(codeSystem, "downstream unavailable (attempt %d)", env.GetRetryCount()+1)
			}
			return insertEffect(ctx, tx, m.GetValue())
		}, nil)
		f.publish(f.envelope("order:2", "pay"))
		waitFor(t, "processed", func() bool { return f.count(f.m.Processed) == 1 })
		f.drain()
		if got := f.effects(); got != 1 {
			t.Errorf("effects = %d, want 1", got)
		}
		if got := f.count(f.m.Retried); got != 3 {
			t.Errorf("retried = %d, want 3", got)
		}
		if got := f.count(f.m.DeadLettered); got != 0 {
			t.Errorf("dead-lettered = %d, want 0", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 4 {
			t.Fatalf("handler ran %d times, want 4", len(seen))
		}
		for _, l := range late {
			t.Error(l)
		}
		first := seen[1].GetLastError().GetFailedAt()
		for n := 1; n <= 3; n++ {
			env := seen[n]
			le := env.GetLastError()
			if env.GetRetryCount() != int32(n) {
				t.Errorf("run %d: retry_count = %d", n, env.GetRetryCount())
			}
			if want := le.GetFailedAt() + fastPolicy.Delay(n, 0.5); env.GetNotBefore() != want {
				t.Errorf("retry %d: not_before = failed_at + %d ms, want + %d ms (d(%d) + floor(jitter*0.5))",
					n, env.GetNotBefore()-le.GetFailedAt(), fastPolicy.Delay(n, 0.5), n)
			}
			if le.GetCode() != codeSystem || !le.GetRetryable() || le.GetRange() != "system" {
				t.Errorf("retry %d: last_error = %v", n, le)
			}
			if env.GetFirstFailedAt() != first {
				t.Errorf("retry %d: first_failed_at = %d, want %d", n, env.GetFirstFailedAt(), first)
			}
			if !proto.Equal(wrapperspb.String("pay"), mustPayload(t, env)) {
				t.Errorf("retry %d: payload changed", n)
			}
		}
	})
}

func mustPayload(t *testing.T, env *envelopepb.Envelope) *wrapperspb.StringValue {
	t.Helper()
	m := &wrapperspb.StringValue{}
	if err := proto.Unmarshal(env.GetPayload(), m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Fault 3: a downstream that always fails with a retryable code gives
// exactly max_retries retries, then one dead-letter record holding the
// original payload.
func TestFault3RetriesExhausted(t *testing.T) {
	t.Parallel()
	forMatrix(t, func(t *testing.T, be dbBackend, bk brokerKind) {
		p := fastPolicy
		p.MaxRetries = 3
		f := newFixture(t, be, bk, p)
		f.clock = newScaledClock(10)
		f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			if err := insertEffect(ctx, tx, "doomed"); err != nil {
				return err
			}
			return classify.NewError(codeSystem, "downstream always fails")
		}, nil)
		orig := f.envelope("order:3", "pay")
		f.publish(orig)
		waitFor(t, "dead-lettered", func() bool { return f.count(f.m.DeadLettered) == 1 })
		f.drain()
		if got := f.count(f.m.Retried); got != 3 {
			t.Errorf("retried = %d, want max_retries = 3", got)
		}
		if got := f.calls.Load(); got != 4 {
			t.Errorf("handler runs = %d, want 4", got)
		}
		if got := f.effects(); got != 0 {
			t.Errorf("effects = %d, want 0 (every attempt rolled back)", got)
		}
		recs := f.deadLetters()
		if len(recs) != 1 {
			t.Fatalf("dead-letter records = %d, want 1", len(recs))
		}
		r := recs[0]
		if r.Reason != dlq.ReasonRetriesExhausted || r.Code != codeSystem || r.Attempts != 4 ||
			r.Handler != handlerName || r.BizKey != "order:3" || r.Topic != topic {
			t.Errorf("record = %+v", r)
		}
		if r.FirstFailedAt.IsZero() || r.LastFailedAt.Before(r.FirstFailedAt) {
			t.Errorf("failure times: first %v last %v", r.FirstFailedAt, r.LastFailedAt)
		}
		env, err := envelope.Unmarshal(r.Envelope)
		if err != nil {
			t.Fatal(err)
		}
		if string(env.GetPayload()) != string(orig.GetPayload()) || env.GetMessageId() != orig.GetMessageId() {
			t.Errorf("dead-lettered envelope lost the original payload or id")
		}
		if env.GetRetryCount() != 3 {
			t.Errorf("dead-lettered envelope retry_count = %d, want 3", env.GetRetryCount())
		}
	})
}

// Fault 7: a business write failing after the claim rolls the claim back,
// so the retry is processed, not dropped as a duplicate.
func TestFault7ClaimRolledBack(t *testing.T) {
	t.Parallel()
	forMatrix(t, func(t *testing.T, be dbBackend, bk brokerKind) {
		f := newFixture(t, be, bk, fastPolicy)
		f.clock = newScaledClock(10)
		f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			env, _ := consumer.EnvelopeFrom(ctx)
			if env.GetRetryCount() == 0 {
				// A real failing write: biz_key is NOT NULL.
				_, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, retry_count, note) VALUES (NULL, 0, 'x')`)
				if err == nil {
					t.Error("the failing write succeeded")
				}
				return err
			}
			return insertEffect(ctx, tx, m.GetValue())
		}, nil)
		f.publish(f.envelope("order:7", "pay"))
		waitFor(t, "processed", func() bool { return f.count(f.m.Processed) == 1 })
		f.drain()
		if got := f.effects(); got != 1 {
			t.Errorf("effects = %d, want 1", got)
		}
		f.wantCount("retried", f.m.Retried, 1)
		f.wantCount("deduped (the retry was dropped as a duplicate)", f.m.Deduped, 0)
	})
}

// Fault 4: a non-retryable code, and a payload or envelope that does not
// decode, are dead-lettered at once, with no retry.
func TestFault4DeadLetterAtOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		publish func(f *fixture)
		reason  dlq.Reason
		code    int32
		runs    int64
	}{
		{"non-retryable code", func(f *fixture) { f.publish(f.envelope("order:4a", "biz-fail")) },
			dlq.ReasonNonRetryable, codeBusiness, 1},
		{"payload does not decode", func(f *fixture) {
			env := f.envelope("order:4b", "x")
			env.Payload = []byte{0xff, 0xff, 0xff}
			f.publish(env)
		}, dlq.ReasonDecode, consumer.CodeDecode, 0},
		{"envelope does not decode", func(f *fixture) {
			if err := f.br.raw(context.Background(), topic, []byte("not an envelope")); err != nil {
				f.t.Fatal(err)
			}
		}, dlq.ReasonDecode, consumer.CodeDecode, 0},
	}
	for _, m := range matrix() {
		if m.batch && m.br.name != sharedSQLiteBroker.name { // the shared queue's batch mode has its own path
			continue
		}
		for _, tc := range cases {
			t.Run(m.db.name+"+"+m.br.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				if m.batch {
					batchMode.Store(t.Name(), true)
				}
				f := newFixture(t, m.db, m.br, fastPolicy)
				f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
					return classify.NewError(codeBusiness, "order already closed")
				}, nil)
				tc.publish(f)
				waitFor(t, "a dead-letter record", func() bool { return len(f.deadLetters()) == 1 })
				f.drain()
				if got := f.count(f.m.Retried); got != 0 {
					t.Errorf("retried = %d, want 0", got)
				}
				if got := f.calls.Load(); got != tc.runs {
					t.Errorf("handler runs = %d, want %d", got, tc.runs)
				}
				recs := f.deadLetters()
				if len(recs) != 1 {
					t.Fatalf("records = %d, want 1", len(recs))
				}
				if r := recs[0]; r.Reason != tc.reason || r.Code != tc.code {
					t.Errorf("record reason %s code %d, want %s %d", r.Reason, r.Code, tc.reason, tc.code)
				}
			})
		}
	}
}

// In batch mode a message whose business write fails rolls back to its own
// savepoint: the other messages of the batch keep their effects, and the
// failed one is retried, not dropped as a duplicate.
func TestBatchIsolatesFailures(t *testing.T) {
	t.Parallel()
	for _, be := range append([]dbBackend{sqliteBackend, postgresBackend}, mysqlBackends()...) {
		t.Run(be.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, be, sqliteBroker, fastPolicy)
			f.clock = newScaledClock(10)
			for i := range 10 {
				f.publish(f.envelope(fmt.Sprintf("order:b%d", i), fmt.Sprint(i)))
			}
			f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
				env, _ := consumer.EnvelopeFrom(ctx)
				if m.GetValue() == "5" && env.GetRetryCount() == 0 {
					if err := insertEffect(ctx, tx, "partial"); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, retry_count, note) VALUES (NULL, 0, 'x')`)
					return err
				}
				return insertEffect(ctx, tx, m.GetValue())
			}, func(c *consumer.Config) { c.PerMessageTx, c.FetchSize, c.Workers = false, 16, 1 })
			waitFor(t, "10 processed", func() bool { return f.count(f.m.Processed) == 10 })
			f.drain()
			if got := f.effects(); got != 10 {
				t.Errorf("effects = %d, want 10", got)
			}
			var partial int
			if err := f.db.QueryRow(`SELECT count(*) FROM effects WHERE note = 'partial'`).Scan(&partial); err != nil || partial != 0 {
				t.Errorf("the failed message's partial write survived: %d %v", partial, err)
			}
			if got := f.count(f.m.Retried); got != 1 {
				t.Errorf("retried = %d, want 1", got)
			}
			if got := f.count(f.m.Deduped); got != 0 {
				t.Errorf("deduped = %d, want 0", got)
			}
		})
	}
}
