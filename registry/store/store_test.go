package store_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/msgcontract/msgcontract/registry/internal/pgtest"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// forEachStore runs test on a fresh SQLite store and, when
// MSGCONTRACT_TEST_POSTGRES names a server, on a fresh PostgreSQL schema.
func forEachStore(t *testing.T, test func(t *testing.T, st *store.Store)) {
	t.Helper()
	for name, dsn := range map[string]func(*testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "registry.db") },
		"postgres": func(t *testing.T) string { return pgtest.DSN(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st, err := store.Open(dsn(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			test(t, st)
		})
	}
}

func schema(text string) store.Schema { return store.Schema{Type: "PROTOBUF", Text: text} }

func TestRegisterIdenticalReturnsExisting(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		a, err := st.Register(ctx, "s", schema("a"), nil)
		if err != nil {
			t.Fatal(err)
		}
		again, err := st.Register(ctx, "s", schema("a"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Existed || again.ID != a.ID || again.Version != 1 {
			t.Fatalf("re-registering: got %+v, want existing id %d version 1", again, a.ID)
		}
		other, err := st.Register(ctx, "other", schema("a"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if other.ID != a.ID || other.Version != 1 || other.Existed {
			t.Fatalf("same schema in another subject: got %+v, want id %d version 1", other, a.ID)
		}
		b, err := st.Register(ctx, "s", schema("b"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if b.ID == a.ID || b.Version != 2 {
			t.Fatalf("new schema: got %+v", b)
		}
	})
}

func TestRegisterCheckVetoes(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		veto := errors.New("incompatible")
		if _, err := st.Register(ctx, "s", schema("a"), nil); err != nil {
			t.Fatal(err)
		}
		_, err := st.Register(ctx, "s", schema("b"), func(_ context.Context, live []store.Version) error {
			if len(live) != 1 || live[0].Schema.Text != "a" {
				t.Errorf("check saw %+v, want version 1 with text a", live)
			}
			return veto
		})
		if !errors.Is(err, veto) {
			t.Fatalf("got %v, want the check's error", err)
		}
		vs, _ := st.Versions(ctx, "s", false)
		if len(vs) != 1 {
			t.Fatalf("vetoed schema was stored: %d versions", len(vs))
		}
	})
}

func TestConcurrentRegistrationsGetConsecutiveVersions(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		const n = 50
		var wg sync.WaitGroup
		got := make([]int, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := st.Register(ctx, "s", schema(fmt.Sprint("schema ", i)), nil)
				if err != nil {
					t.Error(err)
				}
				got[i] = r.Version
			}()
		}
		wg.Wait()
		slices.Sort(got)
		for i, v := range got {
			if v != i+1 {
				t.Fatalf("versions %v are not 1..%d", got, n)
			}
		}
	})
}

func TestDeletes(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		for _, s := range []string{"a", "b", "c"} {
			if _, err := st.Register(ctx, "s", schema(s), nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.DeleteVersion(ctx, "s", 2, true); !errors.Is(err, store.ErrVersionNotSoftDeleted) {
			t.Fatalf("permanent delete of a live version: got %v", err)
		}
		if v, err := st.DeleteVersion(ctx, "s", subjectref.Latest, false); err != nil || v != 3 {
			t.Fatalf("soft delete latest: got %d, %v", v, err)
		}
		if _, err := st.DeleteVersion(ctx, "s", 3, false); !errors.Is(err, store.ErrVersionSoftDeleted) {
			t.Fatalf("soft delete twice: got %v", err)
		}
		r, err := st.Register(ctx, "s", schema("d"), nil)
		if err != nil || r.Version != 4 {
			t.Fatalf("numbering continues after a soft delete: got %+v, %v", r, err)
		}
		if _, err := st.DeleteSubject(ctx, "s", true); !errors.Is(err, store.ErrSubjectNotSoftDeleted) {
			t.Fatalf("permanent subject delete first: got %v", err)
		}
		vs, err := st.DeleteSubject(ctx, "s", false)
		if err != nil || !slices.Equal(vs, []int{1, 2, 4}) {
			t.Fatalf("soft subject delete: got %v, %v", vs, err)
		}
		if subs, _ := st.Subjects(ctx, false); len(subs) != 0 {
			t.Fatalf("soft-deleted subject still listed: %v", subs)
		}
		if subs, _ := st.Subjects(ctx, true); !slices.Equal(subs, []string{"s"}) {
			t.Fatalf("deleted=true: %v", subs)
		}
		if _, err := st.DeleteSubject(ctx, "s", true); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Versions(ctx, "s", true); !errors.Is(err, store.ErrSubjectNotFound) {
			t.Fatalf("after permanent delete: got %v", err)
		}
		if _, err := st.SchemaByID(ctx, r.ID); !errors.Is(err, store.ErrSchemaNotFound) {
			t.Fatalf("schema of permanently deleted subject: got %v", err)
		}
	})
}

func TestConfig(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := st.Config(ctx, "s"); !errors.Is(err, store.ErrConfigNotFound) {
			t.Fatalf("got %v", err)
		}
		if err := st.SetConfig(ctx, "s", "FULL"); err != nil {
			t.Fatal(err)
		}
		if err := st.SetConfig(ctx, "s", "NONE"); err != nil {
			t.Fatal(err)
		}
		if l, err := st.Config(ctx, "s"); err != nil || l != "NONE" {
			t.Fatalf("got %q, %v", l, err)
		}
		if prev, err := st.DeleteConfig(ctx, "s"); err != nil || prev != "NONE" {
			t.Fatalf("got %q, %v", prev, err)
		}
	})
}

// TestTwoInstancesShareOneStore registers from two Store handles on one
// database at once, as two registry instances would: versions stay
// distinct and consecutive.
func TestTwoInstancesShareOneStore(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, a, b *store.Store) {
		ctx := context.Background()
		const n = 40
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st := a
				if i%2 == 1 {
					st = b
				}
				if _, err := st.Register(ctx, "s", schema(fmt.Sprint("shared ", i)), nil); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		vs, err := a.Versions(ctx, "s", false)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			if v.Version != i+1 {
				t.Fatalf("version %d at position %d", v.Version, i)
			}
		}
		if len(vs) != n {
			t.Fatalf("%d versions, want %d", len(vs), n)
		}
	}
	for name, dsn := range map[string]func(*testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "registry.db") },
		"postgres": func(t *testing.T) string { return pgtest.DSN(t) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := dsn(t)
			a, err := store.Open(d)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := store.Open(d)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			run(t, a, b)
		})
	}
}

// TestVersionHeads lists what Versions lists, ids and numbers, without
// the schemas' text.
func TestVersionHeads(t *testing.T) {
	forEachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if _, err := st.VersionHeads(ctx, "s"); !errors.Is(err, store.ErrSubjectNotFound) {
			t.Fatalf("no subject: %v", err)
		}
		for _, s := range []string{"a", "b", "c"} {
			if _, err := st.Register(ctx, "s", schema(s), nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := st.DeleteVersion(ctx, "s", 2, false); err != nil {
			t.Fatal(err)
		}
		full, err := st.Versions(ctx, "s", false)
		if err != nil {
			t.Fatal(err)
		}
		heads, err := st.VersionHeads(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if len(heads) != len(full) || len(heads) != 2 {
			t.Fatalf("heads %+v, versions %+v", heads, full)
		}
		for i, h := range heads {
			f := full[i]
			if h.Subject != f.Subject || h.Version != f.Version || h.Deleted || h.Schema.ID != f.Schema.ID || h.Schema.Text != "" {
				t.Fatalf("head %+v, version %+v", h, f)
			}
		}
	})
}
