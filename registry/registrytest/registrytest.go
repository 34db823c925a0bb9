// Package registrytest runs msgcontract's schema registry inside a test:
// the API on a fresh SQLite store behind an httptest server, gone when the
// test ends. Tests of other parts that need a real registry (the Kafka
// wire format, the cross-language interop tests) use it instead of wiring
// the store, the API and the server themselves.
package registrytest

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/msgcontract/msgcontract/contracts"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/client"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// Start serves a registry on a fresh SQLite store for the rest of the test
// and returns a client of it (its URL is the server's).
func Start(t testing.TB) *client.Client {
	t.Helper()
	_, srv := New(t)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &client.Client{URL: ts.URL}
}

// Register registers the .proto file at path as subject and returns the
// schema id. A file importing msgcontract/v1/options.proto is registered as
// `msgcontract registry push` registers it: options.proto first, under the
// subject of its import path, and the file with a reference to it. The
// registry would resolve the import without one, but a Confluent client
// reading the version (confluent-kafka's ProtobufSerializer with
// use.latest.version, its rule executors) builds the schema from its
// references alone.
func Register(t testing.TB, c *client.Client, subject, path string) int64 {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var refs []subjectref.Reference
	if importsOptions.Match(text) {
		opts, err := contracts.Source(contracts.OptionsPath)
		if err != nil {
			t.Fatal(err)
		}
		_, version, err := c.Register(context.Background(), contracts.OptionsPath, string(opts), nil)
		if err != nil {
			t.Fatalf("register %s: %v", contracts.OptionsPath, err)
		}
		refs = []subjectref.Reference{{Name: contracts.OptionsPath, Subject: contracts.OptionsPath, Version: version}}
	}
	id, _, err := c.Register(context.Background(), subject, string(text), refs)
	if err != nil {
		t.Fatalf("register %s as %s: %v", path, subject, err)
	}
	return id
}

// importsOptions matches an import of msgcontract's options.
var importsOptions = regexp.MustCompile(`(?m)^\s*import\s+(public\s+)?"msgcontract/v1/options\.proto"\s*;`)

// New opens a fresh SQLite store, closed when the test ends, and the
// registry API on it, for a test that serves it its own way (behind the
// console, say).
func New(t testing.TB) (*store.Store, *api.Server) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := api.New(api.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return st, srv
}
