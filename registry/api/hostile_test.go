package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/schema"
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

// TestHostileSchemasBounded is the acceptance test of bounded cost: for
// attackFor, 8 clients without a token send near-4 MiB one-line schemas to
// the endpoints that compile them (compatibility and lookup) while another
// reads GET /schemas/ids/1. Every hostile request must be answered
// (compiled, or refused with 503/50002 and Retry-After), none may hang;
// no more compilations than the limit may run at once; the workers' CPU
// time must stay within what the compile slots allow over the attack, and
// stop growing once the attack's requests are answered (abandoned
// compilations are killed, not left to finish); every read must succeed;
// and a registration afterwards must too. The read latencies and slowest
// answer are logged, not asserted: make bench-registry prints them.
func TestHostileSchemasBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make check): eight seconds of attack; make test runs it")
	}
	const attackFor, slots = 8 * time.Second, 1
	st, err := store.Open(filepath.Join(t.TempDir(), "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	pool, err := schema.NewPool(slots + 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pool.Warm(); err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(api.Config{Store: st, Token: "secret", MaxCompilations: slots, Workers: pool})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := &client{t: t, url: ts.URL, token: "secret"}
	c.expect("POST", "/subjects/s/versions", reg(v1), 200, 0)

	big, err := json.Marshal(reg(oneLineSchema(api.DefaultBodyLimit - 64<<10)))
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/compatibility/subjects/s/versions/latest", "/subjects/s"}
	// A request that hangs fails the test instead of stalling it.
	hc := &http.Client{Timeout: time.Minute}

	readsDone := make(chan struct{})
	var reads []time.Duration
	var readErr error
	attackOver := make(chan struct{})
	reader := &http.Client{Timeout: time.Minute, Transport: &http.Transport{}}
	go func() {
		defer close(readsDone)
		for {
			select {
			case <-attackOver:
				return
			default:
			}
			t0 := time.Now()
			resp, err := reader.Get(ts.URL + "/schemas/ids/1")
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			if err != nil {
				readErr = fmt.Errorf("GET /schemas/ids/1 during the attack: %v", err)
				return
			}
			reads = append(reads, time.Since(t0))
			time.Sleep(5 * time.Millisecond)
		}
	}()

	type answer struct {
		status int
		code   int
		retry  string
		body   string
		took   time.Duration
		err    error
	}
	cpu0 := pool.Stats().CPU
	start := time.Now()
	var wg sync.WaitGroup
	answers := make(chan answer, 1024)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; time.Since(start) < attackFor; j++ {
				t0 := time.Now()
				resp, err := hc.Post(ts.URL+paths[(i+j)%2], api.ContentType, bytes.NewReader(big))
				a := answer{err: err}
				if err == nil {
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					var e struct {
						Code int `json:"error_code"`
					}
					_ = json.Unmarshal(b, &e)
					a = answer{status: resp.StatusCode, code: e.Code, retry: resp.Header.Get("Retry-After"), body: string(b)}
				}
				a.took = time.Since(t0)
				answers <- a
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	cpuAttack := pool.Stats().CPU - cpu0
	close(attackOver)
	<-readsDone
	close(answers)
	if readErr != nil {
		t.Fatal(readErr)
	}
	refused, n := 0, 0
	var slowest time.Duration
	for a := range answers {
		n++
		slowest = max(slowest, a.took)
		switch {
		case a.err != nil:
			t.Errorf("a hostile request got no answer: %v", a.err)
		case a.status == http.StatusOK, a.status == http.StatusNotFound: // compiled: compatible, or not in the subject
		case a.status == http.StatusServiceUnavailable:
			refused++
			if a.code != api.CodeTimedOut || a.retry == "" {
				t.Errorf("a refusal must carry error_code %d and Retry-After: %.300s", api.CodeTimedOut, a.body)
			}
		default:
			t.Errorf("unexpected answer %d: %.300s", a.status, a.body)
		}
	}
	// Once answered, nothing of the attack may still compile: the
	// workers' CPU stops growing.
	time.Sleep(time.Second)
	after := pool.Stats().CPU - cpu0 - cpuAttack
	stats := srv.CompileStats()
	sort.Slice(reads, func(i, j int) bool { return reads[i] < reads[j] })
	p99 := time.Duration(0)
	if len(reads) > 0 {
		p99 = reads[len(reads)*99/100]
	}
	t.Logf("%d hostile requests in %v, %d refused, slowest answer %v; workers: %+v, CPU %v during the attack, %v after it; %d reads, p99 %v; gate %+v",
		n, wall.Round(time.Millisecond), refused, slowest.Round(time.Millisecond), pool.Stats(), cpuAttack, after, len(reads), p99, stats)
	if stats.Peak > slots {
		t.Errorf("%d compilations ran at once; the limit is %d", stats.Peak, slots)
	}
	if refused == 0 {
		t.Errorf("4 MiB schemas cannot compile within the budget: want refusals, got none; gate %+v", stats)
	}
	// Each slot runs one worker at a time; a Go process compiling uses a
	// core and some of another for its collector: 1.5 cores per slot,
	// plus starting the replacements of killed workers.
	bound := time.Duration(float64(slots)*1.5*float64(wall)) + time.Duration(pool.Stats().Started)*200*time.Millisecond
	if cpuAttack > bound {
		t.Errorf("the workers used %v of CPU in %v with %d slot(s); the bound is %v", cpuAttack, wall, slots, bound)
	}
	if after > 300*time.Millisecond {
		t.Errorf("the workers used %v of CPU in the second after the attack was answered: abandoned compilations kept running", after)
	}
	c.expect("POST", "/subjects/s/versions", reg(v2), 200, 0)
}

// TestClientGoneKillsWorker sends a schema that takes seconds to compile
// under a long budget and hangs up once it is sent: the worker compiling
// it must be killed then, not left to finish.
func TestClientGoneKillsWorker(t *testing.T) {
	pool, err := schema.NewPool(1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	url := startTestServer(t, api.Config{CompileTimeout: 5 * time.Minute, Workers: pool})
	(&client{t: t, url: url}).expect("POST", "/subjects/s/versions", reg(v1), 200, 0)
	big, err := json.Marshal(reg(oneLineSchema(api.DefaultBodyLimit - 64<<10)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/subjects/s", bytes.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", api.ContentType)
	done := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("answered %d before the client went away", resp.StatusCode)
		}
		done <- err
	}()
	// Hang up once a worker is compiling it (the body is sent).
	waitFor(t, "a worker compiling", func() bool { return pool.Stats().CPU > 100*time.Millisecond })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the request: %v", err)
	}
	waitFor(t, "the worker killed", func() bool { return pool.Stats().Killed == 1 })
}

// waitFor polls cond for up to a minute, a bound against hanging, not a
// measure.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %s after a minute", what)
		}
	}
}
