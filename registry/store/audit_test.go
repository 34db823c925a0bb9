package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/registry/internal/pgtest"
	"github.com/msgcontract/msgcontract/registry/store"
)

// auditBackend opens stores of one kind (a fresh database each call) and
// the database under them, for editing the audit log behind the store's
// back.
type auditBackend struct {
	name string
	open func(t *testing.T) (*store.Store, rawDB)
}

func auditBackends() []auditBackend {
	opener := func(driver string, dsn func(*testing.T) string) func(t *testing.T) (*store.Store, rawDB) {
		return func(t *testing.T) (*store.Store, rawDB) {
			t.Helper()
			d := dsn(t)
			st, err := store.Open(d)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			if driver == "sqlite3" {
				d = "file:" + d + "?_busy_timeout=10000"
			}
			raw, err := sql.Open(driver, d)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { raw.Close() })
			return st, rawDB{raw, driver == "pgx"}
		}
	}
	return []auditBackend{
		{"sqlite", opener("sqlite3", func(t *testing.T) string { return filepath.Join(t.TempDir(), "registry.db") })},
		{"postgres", opener("pgx", func(t *testing.T) string { return pgtest.DSN(t) })},
	}
}

// forEachAuditStore runs test on a fresh store of each backend, with the
// database under it.
func forEachAuditStore(t *testing.T, test func(t *testing.T, st *store.Store, raw rawDB)) {
	t.Helper()
	for _, b := range auditBackends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			st, raw := b.open(t)
			test(t, st, raw)
		})
	}
}

// rawDB is the database under a store, for editing the audit log behind
// the store's back.
type rawDB struct {
	*sql.DB
	pg bool
}

// rebind rewrites ? placeholders as $1, $2... for PostgreSQL.
func (raw rawDB) rebind(q string) string {
	if !raw.pg {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func mustExec(t *testing.T, raw rawDB, q string, args ...any) {
	t.Helper()
	if _, err := raw.Exec(raw.rebind(q), args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func entries(t *testing.T, st *store.Store, f store.AuditFilter) []store.AuditEntry {
	t.Helper()
	es, err := st.AuditEntries(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func verified(t *testing.T, st *store.Store) store.AuditReport {
	t.Helper()
	r, err := st.VerifyAudit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAuditRecordsEachChange makes every kind of change, and changes that
// change nothing or fail, each as some actor: each change appends exactly
// its entry, the others nothing, and the chain verifies.
func TestAuditRecordsEachChange(t *testing.T) {
	t.Parallel()
	alice := store.Actor{Principal: "user:alice", Method: "basic", Remote: "10.0.0.7:5100"}
	bot := store.Actor{Principal: "token:deploy-bot", Method: "token", Remote: "10.0.0.8"}
	veto := func(context.Context, []store.Version) error { return errors.New("incompatible") }
	type want struct{ action, subject, detail string }
	steps := []struct {
		name  string
		actor *store.Actor // nil: no actor in the context ("local")
		do    func(ctx context.Context, st *store.Store) error
		want  *want // nil: no entry
	}{
		{"register", &alice, func(ctx context.Context, st *store.Store) error {
			_, err := st.Register(ctx, "pay", schema("a"), nil)
			return err
		}, &want{"register", "pay", `{"id":1,"version":1}`}},
		{"register the same schema again", &alice, func(ctx context.Context, st *store.Store) error {
			_, err := st.Register(ctx, "pay", schema("a"), nil)
			return err
		}, nil},
		{"register vetoed by the check", &bot, func(ctx context.Context, st *store.Store) error {
			if _, err := st.Register(ctx, "pay", schema("b"), veto); err == nil {
				return errors.New("the veto was ignored")
			}
			return nil
		}, nil},
		{"register a second version", &bot, func(ctx context.Context, st *store.Store) error {
			_, err := st.Register(ctx, "pay", schema("b"), nil)
			return err
		}, &want{"register", "pay", `{"id":2,"version":2}`}},
		{"import", nil, func(ctx context.Context, st *store.Store) error {
			_, err := st.Import(ctx, "imported", schema("c"), 100, 5)
			return err
		}, &want{"import", "imported", `{"id":100,"version":5}`}},
		{"import the same again", nil, func(ctx context.Context, st *store.Store) error {
			_, err := st.Import(ctx, "imported", schema("c"), 100, 5)
			return err
		}, nil},
		{"import conflicting", nil, func(ctx context.Context, st *store.Store) error {
			if _, err := st.Import(ctx, "imported", schema("d"), 100, 6); !errors.Is(err, store.ErrImportConflict) {
				return fmt.Errorf("got %v, want an import conflict", err)
			}
			return nil
		}, nil},
		{"set a subject's level", &alice, func(ctx context.Context, st *store.Store) error {
			return st.SetConfig(ctx, "pay", "FULL")
		}, &want{"config", "pay", `{"new":{"level":"FULL"},"old":null}`}},
		{"set the level it has", &alice, func(ctx context.Context, st *store.Store) error {
			return st.SetConfig(ctx, "pay", "FULL")
		}, nil},
		{"update the config's settings", &bot, func(ctx context.Context, st *store.Store) error {
			_, err := st.UpdateConfig(ctx, "pay", func(cur store.ConfigRow, _ bool) (store.ConfigRow, error) {
				cur.Settings = `{"normalize":true,"compatibilityGroup":"app"}`
				return cur, nil
			})
			return err
		}, &want{"config", "pay", `{"new":{"level":"FULL","settings":{"compatibilityGroup":"app","normalize":true}},"old":{"level":"FULL"}}`}},
		{"update refused by its func", &bot, func(ctx context.Context, st *store.Store) error {
			_, err := st.UpdateConfig(ctx, "pay", func(store.ConfigRow, bool) (store.ConfigRow, error) {
				return store.ConfigRow{}, errors.New("no")
			})
			if err == nil {
				return errors.New("the refusal was ignored")
			}
			return nil
		}, nil},
		{"set the global level", &alice, func(ctx context.Context, st *store.Store) error {
			return st.SetConfig(ctx, store.GlobalSubject, "NONE")
		}, &want{"config", "", `{"new":{"level":"NONE"},"old":null}`}},
		{"delete the global config", &alice, func(ctx context.Context, st *store.Store) error {
			_, err := st.DeleteConfig(ctx, store.GlobalSubject)
			return err
		}, &want{"config-delete", "", `{"new":null,"old":{"level":"NONE"}}`}},
		{"delete a config there is not", &alice, func(ctx context.Context, st *store.Store) error {
			if _, err := st.DeleteConfig(ctx, "nobody"); !errors.Is(err, store.ErrConfigNotFound) {
				return fmt.Errorf("got %v, want ErrConfigNotFound", err)
			}
			return nil
		}, nil},
		{"set a mode", &bot, func(ctx context.Context, st *store.Store) error {
			return st.SetMode(ctx, "pay", "READONLY")
		}, &want{"mode", "pay", `{"new":"READONLY","old":null}`}},
		{"change the mode", &bot, func(ctx context.Context, st *store.Store) error {
			return st.SetMode(ctx, "pay", "READWRITE")
		}, &want{"mode", "pay", `{"new":"READWRITE","old":"READONLY"}`}},
		{"delete the mode", &bot, func(ctx context.Context, st *store.Store) error {
			_, err := st.DeleteMode(ctx, "pay")
			return err
		}, &want{"mode-delete", "pay", `{"new":null,"old":"READWRITE"}`}},
		{"soft delete a version", &alice, func(ctx context.Context, st *store.Store) error {
			_, err := st.DeleteVersion(ctx, "pay", 1, false)
			return err
		}, &want{"delete-version", "pay", `{"id":1,"permanent":false,"version":1}`}},
		{"permanently delete a live version", &alice, func(ctx context.Context, st *store.Store) error {
			if _, err := st.DeleteVersion(ctx, "pay", 2, true); !errors.Is(err, store.ErrVersionNotSoftDeleted) {
				return fmt.Errorf("got %v, want ErrVersionNotSoftDeleted", err)
			}
			return nil
		}, nil},
		{"permanently delete the version", &alice, func(ctx context.Context, st *store.Store) error {
			_, err := st.DeleteVersion(ctx, "pay", 1, true)
			return err
		}, &want{"delete-version", "pay", `{"id":1,"permanent":true,"version":1}`}},
		{"soft delete the subject", nil, func(ctx context.Context, st *store.Store) error {
			_, err := st.DeleteSubject(ctx, "pay", false)
			return err
		}, &want{"delete-subject", "pay", `{"ids":[2],"permanent":false,"versions":[2]}`}},
		{"permanently delete the subject", nil, func(ctx context.Context, st *store.Store) error {
			_, err := st.DeleteSubject(ctx, "pay", true)
			return err
		}, &want{"delete-subject", "pay", `{"config":{"level":"FULL","settings":{"compatibilityGroup":"app","normalize":true}},"ids":[2],"permanent":true,"versions":[2]}`}},
		{"delete a subject there is not", nil, func(ctx context.Context, st *store.Store) error {
			if _, err := st.DeleteSubject(ctx, "pay", true); !errors.Is(err, store.ErrSubjectNotFound) {
				return fmt.Errorf("got %v, want ErrSubjectNotFound", err)
			}
			return nil
		}, nil},
	}
	forEachAuditStore(t, func(t *testing.T, st *store.Store, _ rawDB) {
		n := 0
		for _, step := range steps {
			ctx := context.Background()
			actor := store.Actor{Principal: "local"}
			if step.actor != nil {
				ctx, actor = store.WithActor(ctx, *step.actor), *step.actor
			}
			if err := step.do(ctx, st); err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
			es := entries(t, st, store.AuditFilter{})
			if step.want == nil {
				if len(es) != n {
					t.Fatalf("%s: %d entries appended, want none: %+v", step.name, len(es)-n, es[n:])
				}
				continue
			}
			if len(es) != n+1 {
				t.Fatalf("%s: %d entries appended, want 1", step.name, len(es)-n)
			}
			n++
			e := es[n-1]
			got := [...]string{e.Action, e.Subject, e.Detail, e.Principal, e.Method, e.Remote}
			want := [...]string{step.want.action, step.want.subject, step.want.detail, actor.Principal, actor.Method, actor.Remote}
			if got != want || e.Seq != int64(n) {
				t.Errorf("%s: entry %d %q, want entry %d %q", step.name, e.Seq, got, n, want)
			}
			if time.Since(e.At) > time.Minute || e.At.Location() != time.UTC {
				t.Errorf("%s: entry time %v, want about now, in UTC", step.name, e.At)
			}
		}
		r := verified(t, st)
		es := entries(t, st, store.AuditFilter{})
		if !r.OK() || r.Entries != n || r.Head != es[n-1].Hash {
			t.Errorf("VerifyAudit = %+v; want %d entries intact, head %s", r, n, es[n-1].Hash)
		}
	})
}

func TestActorFromDefaultsToLocal(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		ctx  context.Context
		want store.Actor
	}{
		{"none", context.Background(), store.Actor{Principal: "local"}},
		{"empty principal", store.WithActor(context.Background(), store.Actor{}), store.Actor{Principal: "local"}},
		{"set", store.WithActor(context.Background(), store.Actor{Principal: "jwt:svc-1", Method: "jwt", Remote: "::1"}),
			store.Actor{Principal: "jwt:svc-1", Method: "jwt", Remote: "::1"}},
	} {
		if got := store.ActorFrom(tt.ctx); got != tt.want {
			t.Errorf("%s: ActorFrom = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestAuditConcurrentRegistrations registers from many goroutines at once,
// on distinct subjects (which take no common lock but the audit log's) and
// on one shared subject: the log has one entry per new version, numbered
// without gaps, and its chain verifies.
func TestAuditConcurrentRegistrations(t *testing.T) {
	t.Parallel()
	const workers, each = 8, 10
	forEachAuditStore(t, func(t *testing.T, st *store.Store, _ rawDB) {
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := store.WithActor(context.Background(), store.Actor{Principal: fmt.Sprintf("user:w%d", w), Method: "basic"})
				for i := range each {
					subject := fmt.Sprintf("own-%d", w)
					if i%2 == 1 {
						subject = "shared"
					}
					if _, err := st.Register(ctx, subject, schema(fmt.Sprintf("w%d-%d", w, i)), nil); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		es := entries(t, st, store.AuditFilter{})
		if len(es) != workers*each {
			t.Fatalf("%d entries, want %d", len(es), workers*each)
		}
		for i, e := range es {
			if e.Seq != int64(i+1) {
				t.Fatalf("entry %d has seq %d: the log has a gap or a duplicate", i+1, e.Seq)
			}
		}
		if r := verified(t, st); !r.OK() || r.Entries != workers*each {
			t.Fatalf("VerifyAudit = %+v", r)
		}
	})
}

// TestVerifyAuditNamesTheFirstBrokenEntry edits the audit log in the
// database as someone covering their tracks would, and checks that
// VerifyAudit names the entry where the chain breaks.
func TestVerifyAuditNamesTheFirstBrokenEntry(t *testing.T) {
	t.Parallel()
	// fill makes four entries.
	fill := func(t *testing.T, st *store.Store) {
		t.Helper()
		for i, a := range []string{"user:alice", "user:bob", "user:alice", "user:carol"} {
			ctx := store.WithActor(context.Background(), store.Actor{Principal: a, Method: "basic", Remote: "10.0.0.1"})
			if _, err := st.Register(ctx, "pay", schema(fmt.Sprint("v", i)), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name    string
		tamper  func(t *testing.T, raw rawDB, other auditBackend)
		seq     int64
		problem string
		intact  int
	}{
		{"principal changed", func(t *testing.T, raw rawDB, _ auditBackend) {
			mustExec(t, raw, `UPDATE audit_log SET principal = 'user:mallory' WHERE seq = 2`)
		}, 2, "entry 2 was altered: its hash does not match its contents", 1},
		{"detail changed", func(t *testing.T, raw rawDB, _ auditBackend) {
			mustExec(t, raw, `UPDATE audit_log SET detail = '{"id":9,"version":3}' WHERE seq = 3`)
		}, 3, "entry 3 was altered", 2},
		{"middle entry removed", func(t *testing.T, raw rawDB, _ auditBackend) {
			mustExec(t, raw, `DELETE FROM audit_log WHERE seq = 2`)
		}, 2, "entry 2 is missing (entries jump from 1 to 3)", 1},
		{"first entry removed", func(t *testing.T, raw rawDB, _ auditBackend) {
			mustExec(t, raw, `DELETE FROM audit_log WHERE seq = 1`)
		}, 1, "entry 1 is missing (the log starts at entry 2)", 0},
		{"entry replaced by a self-consistent one from another log", func(t *testing.T, raw rawDB, other auditBackend) {
			st2, raw2 := other.open(t)
			time.Sleep(2 * time.Millisecond) // another time, so another hash
			fill(t, st2)
			var cols [10]any
			for i := range cols {
				cols[i] = new(string)
			}
			if err := raw2.QueryRow(`SELECT CAST(seq AS TEXT), at, principal, method, remote, action, subject, detail, prev_hash, hash FROM audit_log WHERE seq = 2`).Scan(cols[:]...); err != nil {
				t.Fatal(err)
			}
			mustExec(t, raw, `DELETE FROM audit_log WHERE seq = 2`)
			args := make([]any, 10)
			for i, c := range cols {
				args[i] = *c.(*string)
			}
			var seq int64
			fmt.Sscan(args[0].(string), &seq)
			args[0] = seq
			mustExec(t, raw, `INSERT INTO audit_log (seq, at, principal, method, remote, action, subject, detail, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
		}, 2, "entry 2 does not follow entry 1: prev_hash differs", 1},
	}
	for _, b := range auditBackends() {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				st, raw := b.open(t)
				fill(t, st)
				if r := verified(t, st); !r.OK() || r.Entries != 4 {
					t.Fatalf("before tampering: %+v", r)
				}
				head := entries(t, st, store.AuditFilter{})[3].Hash
				tt.tamper(t, raw, b)
				r := verified(t, st)
				if r.OK() || r.BadSeq != tt.seq || !strings.Contains(r.Problem, tt.problem) || r.Entries != tt.intact || r.Head != head {
					t.Errorf("VerifyAudit = %+v; want entry %d named (%q), %d intact before it, head %s", r, tt.seq, tt.problem, tt.intact, head)
				}
			})
		}
	}
}

func TestVerifyAuditEmptyLog(t *testing.T) {
	t.Parallel()
	forEachAuditStore(t, func(t *testing.T, st *store.Store, _ rawDB) {
		if r := verified(t, st); !r.OK() || r.Entries != 0 || r.Head != strings.Repeat("0", 64) {
			t.Errorf("VerifyAudit of an empty log = %+v; want 0 entries, head 64 zeros", r)
		}
	})
}

// TestAuditEntriesFilters selects entries by subject (plain and
// context-qualified), principal, time and count.
func TestAuditEntriesFilters(t *testing.T) {
	t.Parallel()
	forEachAuditStore(t, func(t *testing.T, st *store.Store, _ rawDB) {
		reg := func(principal, subject, text string) {
			ctx := store.WithActor(context.Background(), store.Actor{Principal: principal, Method: "bearer"})
			if _, err := st.Register(ctx, subject, schema(text), nil); err != nil {
				t.Fatal(err)
			}
		}
		reg("user:alice", "pay", "a")                                             // 1
		reg("user:bob", "ship", "b")                                              // 2
		reg("user:alice", ":.:pay", "c")                                          // 3: pay, qualified with the default context
		reg("user:bob", ":.eu:pay", "d")                                          // 4: pay in another context
		time.Sleep(5 * time.Millisecond)                                          //
		mid := time.Now()                                                         //
		time.Sleep(5 * time.Millisecond)                                          //
		reg("user:carol", "pay", "e")                                             // 5
		reg("user:alice", "ship", "f")                                            // 6
		if err := st.SetConfig(context.Background(), "pay", "NONE"); err != nil { // 7, local
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name string
			f    store.AuditFilter
			want []int64
		}{
			{"all", store.AuditFilter{}, []int64{1, 2, 3, 4, 5, 6, 7}},
			{"subject", store.AuditFilter{Subject: "pay"}, []int64{1, 3, 5, 7}},
			{"subject qualified with the default context", store.AuditFilter{Subject: ":.:pay"}, []int64{1, 3, 5, 7}},
			{"subject of another context", store.AuditFilter{Subject: ":.eu:pay"}, []int64{4}},
			{"principal", store.AuditFilter{Principal: "user:alice"}, []int64{1, 3, 6}},
			{"local principal", store.AuditFilter{Principal: "local"}, []int64{7}},
			{"since", store.AuditFilter{Since: mid}, []int64{5, 6, 7}},
			{"until", store.AuditFilter{Until: mid}, []int64{1, 2, 3, 4}},
			{"subject, principal and since", store.AuditFilter{Subject: "pay", Principal: "user:carol", Since: mid}, []int64{5}},
			{"limit keeps the newest", store.AuditFilter{Limit: 2}, []int64{6, 7}},
			{"limit with subject", store.AuditFilter{Subject: "ship", Limit: 1}, []int64{6}},
			{"nothing", store.AuditFilter{Principal: "user:nobody"}, nil},
		} {
			var got []int64
			for _, e := range entries(t, st, tt.f) {
				got = append(got, e.Seq)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("%s: entries %v, want %v", tt.name, got, tt.want)
			}
		}
	})
}
