package api

import (
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/registry/store"
)

// TestEveryRouteHasANeed: the needs table names every route the server
// serves, so no endpoint is left to a default; and names no route that
// does not exist.
func TestEveryRouteHasANeed(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, r := range s.echo.Routes() {
		key := r.Method + " " + r.Path
		served[key] = true
		if _, ok := needs[key]; !ok {
			t.Errorf("route %s has no entry in the needs table (access.go): say which role it needs", key)
		}
	}
	for key := range needs {
		if !served[key] {
			t.Errorf("the needs table names %s, which the server does not serve", key)
		}
	}
}
