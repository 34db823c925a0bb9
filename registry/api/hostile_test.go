package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/store"
)

// OneLineSchema is a valid schema of about size bytes written on one
// line, the shape that used to cost protocompile O(n²).
func oneLineSchema(size int) string {
	var b strings.Builder
	b.WriteString(`syntax = "proto3"; package hostile.v1; message M { `)
	for i := 1; b.Len() < size; i++ {
		if i == 19000 { // protobuf reserves 19000-19999
			i = 20000
		}
		fmt.Fprintf(&b, "string f%d = %d; ", i, i)
	}
	b.WriteString("}")
	return b.String()
}

// TestHostileSchemasBounded sends near-4 MiB one-line schemas, without a
// token, to the endpoints that compile them (compatibility and lookup),
// from 8 clients at once, while another client reads. Every request must
// be answered (compiled, or refused with 503/50002 and Retry-After), no
// more compilations than the limit may ever run at once, compilations whose
// requests were refused stop on their cancelled context, and reads and
// a later registration must keep working.
func TestHostileSchemasBounded(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv, err := api.New(api.Config{Store: st, Token: "secret", MaxCompilations: 1, CompileTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &client{t: t, url: ts.URL, token: "secret"}
	c.expect("POST", "/subjects/s/versions", reg(v1), 200, 0)

	big := reg(oneLineSchema(api.DefaultBodyLimit - 64<<10))
	anon := &client{t: t, url: ts.URL}
	paths := []string{"/compatibility/subjects/s/versions/latest", "/subjects/s"}
	const clients, rounds = 8, 2

	readsDone := make(chan struct{})
	var reads int
	var readErr error
	attackOver := make(chan struct{})
	go func() {
		defer close(readsDone)
		for {
			select {
			case <-attackOver:
				return
			default:
			}
			r := anon.do("GET", "/subjects/s/versions/latest", nil)
			if r.status != 200 {
				readErr = fmt.Errorf("GET during the attack answered %d: %s", r.status, r.body)
				return
			}
			reads++
		}
	}()

	var wg sync.WaitGroup
	answers := make(chan response, clients*rounds)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range rounds {
				answers <- anon.do("POST", paths[(i+j)%2], big)
			}
		}()
	}
	wg.Wait()
	close(attackOver)
	<-readsDone
	close(answers)
	if readErr != nil {
		t.Fatal(readErr)
	}
	refused := 0
	for r := range answers {
		switch r.status {
		case http.StatusOK, http.StatusNotFound: // compiled: compatible, or not in the subject
		case http.StatusServiceUnavailable:
			refused++
			if r.code(t) != api.CodeTimedOut || r.header.Get("Retry-After") == "" {
				t.Errorf("a refusal must carry error_code %d and Retry-After: %s %v", api.CodeTimedOut, r.body, r.header)
			}
		default:
			t.Errorf("unexpected answer %d: %.300s", r.status, r.body)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := srv.WaitCompilations(ctx); err != nil {
		t.Fatal(err)
	}
	stats := srv.CompileStats()
	t.Logf("%d refused of %d; %d reads meanwhile; gate %+v", refused, clients*rounds, reads, stats)
	if stats.Peak > 1 {
		t.Errorf("%d compilations ran at once; the limit is 1", stats.Peak)
	}
	if refused == 0 {
		t.Errorf("4 MiB schemas cannot compile in 300 ms: want refusals, got none; gate %+v", stats)
	}
	c.expect("POST", "/subjects/s/versions", reg(v2), 200, 0)
}
