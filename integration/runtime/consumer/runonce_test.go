package consumer_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
)

// attempts counts handler runs per delivery attempt: (message id, retry
// count).
type attempts struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *attempts) add(ctx context.Context) {
	env, _ := consumer.EnvelopeFrom(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == nil {
		a.n = map[string]int{}
	}
	a.n[fmt.Sprintf("%s/%d", env.GetMessageId(), env.GetRetryCount())]++
}

// twice lists the attempts whose handler ran more than once.
func (a *attempts) twice() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for k, n := range a.n {
		if n != 1 {
			out = append(out, fmt.Sprintf("%s ran %d times", k, n))
		}
	}
	return out
}

// combo is a database and a transport a test runs on.
type combo struct {
	be dbBackend
	bk brokerKind
}

// A handler runs once per delivery attempt in batch mode: a batch-mate's
// failure rolls back that message's savepoint alone and runs no other
// handler again, with the queue in a file of its own and with the fetch
// read in the business transaction (sqlitequeue-shared).
func TestBatchRunsEachHandlerOncePerAttempt(t *testing.T) {
	t.Parallel()
	combos := []combo{{sqliteBackend, sqliteBroker}, {sqliteBackend, sharedSQLiteBroker}, {postgresBackend, sqliteBroker}}
	for _, be := range mysqlBackends() {
		combos = append(combos, combo{be, sqliteBroker})
	}
	for _, cb := range combos {
		t.Run(cb.be.name+"/"+cb.bk.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, cb.be, cb.bk, fastPolicy)
			f.clock = newScaledClock(10)
			for i := range 12 {
				f.publish(f.envelope(fmt.Sprintf("order:once%d", i), fmt.Sprint(i)))
			}
			var runs attempts
			f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
				runs.add(ctx)
				env, _ := consumer.EnvelopeFrom(ctx)
				if err := insertEffect(ctx, tx, m.GetValue()); err != nil {
					return err
				}
				if env.GetRetryCount() == 0 {
					switch m.GetValue() {
					case "2": // retried, then succeeds
						return classify.NewError(codeSystem, "transient")
					case "7": // dead-lettered at once
						return classify.NewError(codeBusiness, "rejected")
					}
				}
				return nil
			}, func(c *consumer.Config) { c.PerMessageTx, c.FetchSize, c.Workers = false, 16, 1 })
			waitFor(t, "11 processed and a dead letter", func() bool {
				return f.count(f.m.Processed) == 11 && len(f.deadLetters()) == 1
			})
			f.drain()
			if got := runs.twice(); len(got) > 0 {
				t.Errorf("handlers ran more than once in one attempt: %v", got)
			}
			if got := f.calls.Load(); got != 13 {
				t.Errorf("handler runs = %d, want 13 (12 first attempts and the retry of 2)", got)
			}
			if got := f.effects(); got != 11 {
				t.Errorf("effects = %d, want 11 (the failed attempts' writes are rolled back)", got)
			}
			f.wantCount("retried", f.m.Retried, 1)
		})
	}
}

// A producer's duplicate in the same batch as the message it duplicates
// loses the key to it at the batch's claim; when that message's handler
// fails its claim is given back in the transaction, and the duplicate
// claims the key afresh and runs: the effect happens once, by the
// duplicate, and the failed message's retry is deduplicated.
func TestBatchDuplicateOfAFailedMessageClaimsAfresh(t *testing.T) {
	t.Parallel()
	combos := []combo{{sqliteBackend, sqliteBroker}, {sqliteBackend, sharedSQLiteBroker}, {postgresBackend, sqliteBroker}}
	for _, be := range mysqlBackends() {
		combos = append(combos, combo{be, sqliteBroker})
	}
	for _, cb := range combos {
		t.Run(cb.be.name+"/"+cb.bk.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, cb.be, cb.bk, fastPolicy)
			f.clock = newScaledClock(10)
			first := f.envelope("order:dup", "x")
			f.publish(f.envelope("order:before", "b"), first, f.envelope("order:dup", "x"), f.envelope("order:after", "a"))
			var runs attempts
			f.start(func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
				runs.add(ctx)
				env, _ := consumer.EnvelopeFrom(ctx)
				if err := insertEffect(ctx, tx, m.GetValue()); err != nil {
					return err
				}
				if env.GetMessageId() == first.GetMessageId() && env.GetRetryCount() == 0 {
					return classify.NewError(codeSystem, "transient")
				}
				return nil
			}, func(c *consumer.Config) { c.PerMessageTx, c.FetchSize, c.Workers = false, 16, 1 })
			waitFor(t, "3 processed and a duplicate", func() bool {
				return f.count(f.m.Processed) == 3 && f.count(f.m.Deduped) == 1
			})
			f.drain()
			if got := runs.twice(); len(got) > 0 {
				t.Errorf("handlers ran more than once in one attempt: %v", got)
			}
			if got := f.calls.Load(); got != 4 {
				t.Errorf("handler runs = %d, want 4", got)
			}
			if got := f.effects(); got != 3 {
				t.Errorf("effects = %d, want 3", got)
			}
			f.wantCount("retried", f.m.Retried, 1)
			f.wantCount("conflicts", f.m.KeyConflicts, 0)
		})
	}
}
