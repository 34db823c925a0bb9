// Package pgtest gives tests a PostgreSQL database of their own when
// MSGCONTRACT_TEST_POSTGRES (or the project-wide MSGCONTRACT_PG_DSN that
// scripts/with-postgres.sh sets) names a server, and skips them otherwise.
package pgtest

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver "pgx"
)

// Env names a PostgreSQL URL, e.g.
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable.
const Env = "MSGCONTRACT_TEST_POSTGRES"

// ProjectEnv is the variable scripts/with-postgres.sh sets; it is used
// when Env is not set.
const ProjectEnv = "MSGCONTRACT_PG_DSN"

// DSN creates a fresh schema on the server Env names, drops it when tb
// ends, and returns a URL whose search_path selects it. Without Env it
// skips tb.
func DSN(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(Env)
	if base == "" {
		base = os.Getenv(ProjectEnv)
	}
	if base == "" {
		tb.Skip("neither " + Env + " nor " + ProjectEnv + " is set; run under scripts/with-postgres.sh to test on PostgreSQL")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	var n [6]byte
	_, _ = rand.Read(n[:])
	name := "registry_test_" + hex.EncodeToString(n[:])
	if _, err := admin.Exec("CREATE SCHEMA " + name); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if db, err := sql.Open("pgx", base); err == nil {
			_, _ = db.Exec("DROP SCHEMA " + name + " CASCADE")
			db.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}
