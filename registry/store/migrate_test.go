package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/registry/internal/pgtest"
	"github.com/msgcontract/msgcontract/registry/store"
)

// oldTables are the tables as stores were written before configs had
// settings and schemas metadata and rule sets.
const oldTables = `
CREATE TABLE schemas (
  id          %s PRIMARY KEY,
  fingerprint TEXT NOT NULL UNIQUE,
  schema_type TEXT NOT NULL,
  schema_text TEXT NOT NULL,
  refs        TEXT NOT NULL,
  descriptor  %s
);
CREATE TABLE versions (
  subject   TEXT NOT NULL,
  version   INTEGER NOT NULL,
  schema_id %s NOT NULL REFERENCES schemas(id),
  deleted   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (subject, version)
);
CREATE TABLE config (subject TEXT PRIMARY KEY, level TEXT NOT NULL);
CREATE TABLE modes (subject TEXT PRIMARY KEY, mode TEXT NOT NULL);
`

// TestMigrateKeepsData opens a store whose tables predate config settings
// and schema metadata, on SQLite and PostgreSQL: the columns are added,
// every row is kept, the new columns work, and the store gets an audit
// log.
func TestMigrateKeepsData(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T) (dsn, driver, tables string){
		"sqlite": func(t *testing.T) (string, string, string) {
			return filepath.Join(t.TempDir(), "registry.db"), "sqlite3", fmt.Sprintf(oldTables, "INTEGER", "BLOB", "INTEGER")
		},
		"postgres": func(t *testing.T) (string, string, string) {
			return pgtest.DSN(t), "pgx", fmt.Sprintf(oldTables, "BIGSERIAL", "BYTEA", "BIGINT")
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dsn, driver, tables := open(t)
			testMigrate(t, dsn, driver, tables)
		})
	}
}

func testMigrate(t *testing.T, dsn, driver, tables string) {
	ctx := context.Background()
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256([]byte("PROTOBUF\x00a\x00[]"))
	for _, q := range []string{
		tables,
		fmt.Sprintf(`INSERT INTO schemas (fingerprint, schema_type, schema_text, refs) VALUES ('%s', 'PROTOBUF', 'a', '[]')`, hex.EncodeToString(h[:])),
		`INSERT INTO versions (subject, version, schema_id) SELECT 'pay', 1, id FROM schemas`,
		`INSERT INTO config (subject, level) VALUES ('', 'FULL'), ('pay', 'NONE')`,
		`INSERT INTO modes (subject, mode) VALUES ('pay', 'READONLY')`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()

	for range 2 { // a second open finds the columns there
		st, err := store.Open(dsn)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	st, err := store.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for subject, want := range map[string]string{"": "FULL", "pay": "NONE"} {
		if l, err := st.Config(ctx, subject); err != nil || l != want {
			t.Errorf("level of %q = %q, %v; want %s", subject, l, err, want)
		}
	}
	if m, err := st.Mode(ctx, "pay"); err != nil || m != "READONLY" {
		t.Errorf("mode = %q, %v", m, err)
	}
	v, err := st.Version(ctx, "pay", 1, false)
	if err != nil || v.Schema.Text != "a" {
		t.Fatalf("version 1: %+v, %v", v, err)
	}
	if reg, err := st.Register(ctx, "pay", schema("a"), nil); err != nil || !reg.Existed {
		t.Fatalf("the old schema again: %+v, %v; want the existing version", reg, err)
	}
	row, err := st.UpdateConfig(ctx, "pay", func(cur store.ConfigRow, found bool) (store.ConfigRow, error) {
		if !found || cur.Level != "NONE" || cur.Settings != "" {
			t.Errorf("current config %+v (found %v)", cur, found)
		}
		cur.Settings = `{"normalize":true}`
		return cur, nil
	})
	if err != nil || row.Level != "NONE" {
		t.Fatalf("UpdateConfig: %+v, %v", row, err)
	}
	if got, err := st.FullConfig(ctx, "pay"); err != nil || got != (store.ConfigRow{Level: "NONE", Settings: `{"normalize":true}`}) {
		t.Fatalf("FullConfig = %+v, %v", got, err)
	}
	// The store predates the audit log: it has one now, whose first entry
	// is the first change made after the upgrade.
	es, err := st.AuditEntries(ctx, store.AuditFilter{})
	if err != nil || len(es) != 1 || es[0].Seq != 1 || es[0].Action != store.AuditConfig || es[0].Subject != "pay" {
		t.Fatalf("audit log after the upgrade: %+v, %v; want one config entry for pay", es, err)
	}
	if r, err := st.VerifyAudit(ctx); err != nil || !r.OK() || r.Entries != 1 {
		t.Fatalf("VerifyAudit = %+v, %v", r, err)
	}
}
