package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/msgcontract/msgcontract/registry/internal/pgtest"
	"github.com/msgcontract/msgcontract/registry/store"
)

// TestContextsOnDatabaseWithoutThem opens a store written before contexts
// were understood, on SQLite and PostgreSQL: one schema row shared by a
// default subject and a subject stored under the literal name ":.old:pay"
// (which the registry then accepted as a plain name), fingerprinted as
// that version did. Nothing is migrated: the old rows keep their ids, the
// literal name is read as a subject of context .old, and new registrations
// get ids per context.
func TestContextsOnDatabaseWithoutThem(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) (dsn, driver string){
		"sqlite": func(t *testing.T) (string, string) {
			return filepath.Join(t.TempDir(), "registry.db"), "sqlite3"
		},
		"postgres": func(t *testing.T) (string, string) { return pgtest.DSN(t), "pgx" },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn, driver := open(t)
			testContextsOnOldDatabase(t, dsn, driver)
		})
	}
}

func testContextsOnOldDatabase(t *testing.T, dsn, driver string) {
	ctx := context.Background()
	st, err := store.Open(dsn) // the tables, as every earlier version created them
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	// The fingerprint earlier versions stored: type, text, references.
	h := sha256.Sum256([]byte("PROTOBUF\x00a\x00[]"))
	fp := hex.EncodeToString(h[:])
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO schemas (fingerprint, schema_type, schema_text, refs) VALUES ('%s', 'PROTOBUF', 'a', '[]')`, fp),
		`INSERT INTO versions (subject, version, schema_id) SELECT 'pay', 1, id FROM schemas`,
		`INSERT INTO versions (subject, version, schema_id) SELECT ':.old:pay', 1, id FROM schemas`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var legacy int64
	if err := raw.QueryRow(`SELECT id FROM schemas`).Scan(&legacy); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	st, err = store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if got, err := st.Contexts(ctx); err != nil || !slices.Equal(got, []string{".", ".old"}) {
		t.Fatalf("Contexts = %v, %v; want [. .old]", got, err)
	}
	if v, err := st.Lookup(ctx, ":.old:pay", schema("a"), false); err != nil || v.Schema.ID != legacy {
		t.Fatalf("lookup in the old literal subject: %+v, %v; want id %d", v, err, legacy)
	}
	reg := func(subject string) store.Registered {
		t.Helper()
		r, err := st.Register(ctx, subject, schema("a"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := reg("pay"); !r.Existed || r.ID != legacy {
		t.Fatalf("re-registering in pay: %+v, want existing id %d", r, legacy)
	}
	if r := reg(":.old:pay"); !r.Existed || r.ID != legacy {
		t.Fatalf("re-registering in :.old:pay: %+v, want existing id %d", r, legacy)
	}
	if r := reg("pay2"); r.ID != legacy {
		t.Fatalf("same schema in the default context: id %d, want the old row's %d", r.ID, legacy)
	}
	old2 := reg(":.old:pay2")
	if old2.ID == legacy {
		t.Fatalf("a new registration in .old shares the default context's id %d", legacy)
	}
	if r := reg(":.old:pay3"); r.ID != old2.ID {
		t.Fatalf("same schema twice in .old: ids %d and %d", old2.ID, r.ID)
	}
	if r := reg(":.new:pay"); r.ID == legacy || r.ID == old2.ID {
		t.Fatalf("context .new reuses id %d", r.ID)
	}
	if got, err := st.Contexts(ctx); err != nil || !slices.Equal(got, []string{".", ".new", ".old"}) {
		t.Fatalf("Contexts = %v, %v", got, err)
	}
	if err := st.Check(ctx); err != nil {
		t.Fatal(err)
	}
}
