package ddl_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
	"github.com/msgcontract/msgcontract/runtime-go/outbox"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/ddl"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
	"github.com/msgcontract/msgcontract/runtime-go/txcheck"
)

// The tables every dialect's file creates, in file order; SQLite's file
// then has the embedded transport's queue.
var (
	tables      = []string{"msg_dedup", "msg_dedup_conflict", "msg_dedup_chain", "msg_outbox", "msg_outbox_lock", "msg_tx_check"}
	queueTables = []string{"mc_queue", "mc_subscriptions", "mc_dead_letter"}
)

func TestParse(t *testing.T) {
	secs, err := ddl.Parse("-- a comment\n\n-- table: a\n-- about a\nCREATE TABLE a (\n  x TEXT);\nCREATE INDEX i\n  ON a (x);\n-- table: b\nINSERT INTO b VALUES (1);\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []ddl.Section{
		{Table: "a", Statements: []string{"CREATE TABLE a ( x TEXT)", "CREATE INDEX i ON a (x)"}},
		{Table: "b", Statements: []string{"INSERT INTO b VALUES (1)"}},
	}
	if !reflect.DeepEqual(secs, want) {
		t.Errorf("got %q, want %q", secs, want)
	}
	for _, bad := range []string{
		"CREATE TABLE a (x TEXT);\n",                   // outside a section
		"-- table: a\nCREATE TABLE a (x TEXT)\n",       // no ";"
		"-- table: a\nCREATE TABLE a (\n-- table: b\n", // a section inside a statement
	} {
		if _, err := ddl.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted it", bad)
		}
	}
}

func TestEveryDialectHasEveryTable(t *testing.T) {
	for _, d := range []sqldb.Dialect{sqldb.SQLite, sqldb.Postgres, sqldb.MySQL} {
		secs, err := ddl.File(d)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range secs {
			got = append(got, s.Table)
			if len(s.Statements) == 0 || !strings.HasPrefix(s.Statements[0], "CREATE TABLE IF NOT EXISTS {{"+s.Table+"}} (") {
				t.Errorf("%v: section %s does not start by creating {{%s}}: %q", d, s.Table, s.Table, s.Statements)
			}
		}
		want := tables
		if d == sqldb.SQLite {
			want = append(slices.Clip(tables), queueTables...)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v: tables %q, want %q", d, got, want)
		}
		stmts, err := ddl.Statements(d, map[string]string{"msg_dedup": "claims"}, tables...)
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Join(stmts, "\n")
		if strings.Contains(all, "{{") || !strings.Contains(all, "claims_created_at") || strings.Contains(all, "msg_dedup ") {
			t.Errorf("%v: placeholders not replaced:\n%s", d, all)
		}
	}
	if _, err := ddl.Statements(sqldb.SQLite, nil, "no_such_table"); err == nil {
		t.Error("an unknown table was accepted")
	}
}

// TestRuntimeMigratesTheFile: dedup.Migrate, outbox.Migrate, txcheck.Migrate and the
// embedded transport (sqlitequeue.New) create on a fresh SQLite database
// exactly the tables, columns and indexes that running
// contracts/sql/sqlite.sql's statements creates, under the names
// dedup.Config gives them.
func TestRuntimeMigratesTheFile(t *testing.T) {
	ctx := context.Background()
	for _, names := range []map[string]string{
		nil,
		{"msg_dedup": "claims", "msg_dedup_conflict": "claims_conflict", "msg_dedup_chain": "claims_chain"},
	} {
		runtime := open(t)
		store, err := dedup.New(dedup.Config{DB: runtime, Dialect: sqldb.SQLite, Table: names["msg_dedup"]})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := outbox.Migrate(ctx, runtime, sqldb.SQLite); err != nil {
			t.Fatal(err)
		}
		if err := txcheck.Migrate(ctx, runtime, sqldb.SQLite); err != nil {
			t.Fatal(err)
		}
		q, err := sqlitequeue.New(ctx, sqlitequeue.Config{DB: runtime})
		if err != nil {
			t.Fatal(err)
		}
		q.Close()
		all := append(slices.Clip(tables), queueTables...)
		file := open(t)
		stmts, err := ddl.Statements(sqldb.SQLite, names, all...)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stmts {
			if _, err := file.ExecContext(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		got, want := schema(t, runtime), schema(t, file)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the runtime created\n%s\nthe file\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		var wantTables []string
		for _, tb := range all {
			if n, ok := names[tb]; ok {
				tb = n
			}
			wantTables = append(wantTables, "table "+tb)
		}
		var gotTables []string
		for _, l := range got {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "table" {
				gotTables = append(gotTables, l)
			}
		}
		slices.Sort(wantTables)
		if !slices.Equal(gotTables, wantTables) {
			t.Errorf("tables %q, want %q", gotTables, wantTables)
		}
	}
}

func open(t *testing.T) *sql.DB {
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// schema describes every table (its columns and whether it has a rowid)
// and index of db, and the rows of the outbox lock table, one line each.
func schema(t *testing.T, db *sql.DB) []string {
	var out []string
	rows, err := db.Query(`SELECT type, name, tbl_name, sql FROM sqlite_master
		WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	type obj struct{ typ, name, table, sql string }
	var objs []obj
	for rows.Next() {
		var o obj
		var s sql.NullString
		if err := rows.Scan(&o.typ, &o.name, &o.table, &s); err != nil {
			t.Fatal(err)
		}
		o.sql = s.String
		objs = append(objs, o)
	}
	rows.Close()
	for _, o := range objs {
		out = append(out, o.typ+" "+o.name)
		switch o.typ {
		case "table":
			out = append(out, fmt.Sprintf("table %s without rowid %v", o.name, strings.Contains(o.sql, "WITHOUT ROWID")))
			out = append(out, query(t, db, "table "+o.name+" column", `SELECT cid, name, type, "notnull", coalesce(dflt_value, ''), pk FROM pragma_table_info(?)`, o.name)...)
			if strings.HasSuffix(o.name, "_lock") {
				out = append(out, query(t, db, "row", `SELECT * FROM `+o.name)...)
			}
		case "index":
			out = append(out, query(t, db, "index "+o.name+" on "+o.table+" column", `SELECT seqno, name FROM pragma_index_info(?)`, o.name)...)
		}
	}
	slices.Sort(out)
	return out
}

func query(t *testing.T, db *sql.DB, prefix, q string, args ...any) []string {
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, prefix+" "+fmt.Sprint(vals...))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
