// Command registry-bench measures the schema registry: GET
// /schemas/ids/{id} requests per second against a bare echo handler that
// returns the same bytes, and the latency of a FULL_TRANSITIVE
// compatibility check against a subject with 100 versions.
//
//	go run ./bench/registry [-duration 3s] [-workers 32] [-versions 100] [-checks 200]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
)

const header = `syntax = "proto3";
package bench.v1;
import "msgcontract/v1/options.proto";
option (msgcontract.v1.defaults) = {
  error_ranges: [
    { from: 40000 to: 49999 retryable: false name: "business" },
    { from: 50000 to: 59999 retryable: true name: "system" }
  ]
};
enum OrderState {
  option (msgcontract.v1.state_machine) = {};
  ORDER_STATE_UNSPECIFIED = 0;
  PAYING = 1;
  PAID = 2 [(msgcontract.v1.transition) = { from: ["PAYING"] }];
}
message Paid {
  option (msgcontract.v1.event) = {
    topic: "orders" event_type: "PAID" biz_key: "order:{order_id}" target_state: "OrderState.PAID"
  };
  string order_id = 1;
`

// version n of the benchmark contract has n extra fields: each version is
// compatible with all before it.
func version(n int) string {
	var b strings.Builder
	b.WriteString(header)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  string extra_%d = %d;\n", i, i+2)
	}
	b.WriteString("}\n")
	return b.String()
}

func main() {
	// The registry servers compile request schemas in this binary
	// re-executed.
	schema.RunWorkerIfAsked()
	duration := flag.Duration("duration", 6*time.Second, "how long to load each GET endpoint (in alternating rounds)")
	workers := flag.Int("workers", 32, "concurrent GET clients")
	versions := flag.Int("versions", 100, "versions of the checked subject")
	checks := flag.Int("checks", 200, "timed compatibility checks")
	attackFor := flag.Duration("attack", 30*time.Second, "how long to send hostile one-line schemas (0 skips)")
	scaleSchemas := flag.Int("scale-schemas", 100_000, "schemas registered for the scale figures (0 skips)")
	scaleSubjects := flag.Int("scale-subjects", 10_000, "subjects they are spread over")
	scaleWriters := flag.Int("scale-writers", 8, "concurrent registering clients")
	inProcess := flag.Bool("in-process-compile", false, "the child servers compile request schemas in process, not in workers (to compare)")
	flag.Parse()
	if *inProcess {
		os.Setenv(inProcessEnv, "1") // the child servers inherit it
	}
	if db := os.Getenv(childEnv); db != "" {
		if err := serveChild(db); err != nil {
			fmt.Fprintln(os.Stderr, "registry-bench server:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*duration, *workers, *versions, *checks); err != nil {
		fmt.Fprintln(os.Stderr, "registry-bench:", err)
		os.Exit(1)
	}
	if *attackFor > 0 {
		inTempDir(func(dir string) error { return attack(dir, *attackFor) })
	}
	if *scaleSchemas > 0 {
		inTempDir(func(dir string) error { return scale(dir, *scaleSchemas, *scaleSubjects, *scaleWriters, 2000) })
	}
}

func run(duration time.Duration, workers, versions, checks int) error {
	dir, err := os.MkdirTemp("", "registry-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(filepath.Join(dir, "registry.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	// Request schemas compile in workers, as `msgcontract registry serve`
	// compiles them.
	pool, err := schema.NewPool(api.DefaultMaxCompilations() + 1)
	if err != nil {
		return err
	}
	defer pool.Close()
	srv, err := api.New(api.Config{Store: st, Workers: pool})
	if err != nil {
		return err
	}
	reg := httptest.NewServer(srv)
	defer reg.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers * 2}}

	if _, err := call(hc, "POST", reg.URL+"/subjects/get-value/versions", body(version(3))); err != nil {
		return err
	}
	want, err := call(hc, "GET", reg.URL+"/schemas/ids/1", nil)
	if err != nil {
		return err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/schemas/ids/:id", func(c echo.Context) error { return c.Blob(http.StatusOK, api.ContentType, want) })
	bare := httptest.NewServer(e)
	defer bare.Close()

	// Alternate short rounds, swapping which side goes first, so that load
	// from elsewhere on the machine and warm-up hit both sides alike.
	const rounds = 6
	var regRate, bareRate float64
	for i := range rounds {
		sides := []struct {
			url  string
			rate *float64
		}{{reg.URL, &regRate}, {bare.URL, &bareRate}}
		if i%2 == 1 {
			sides[0], sides[1] = sides[1], sides[0]
		}
		for _, side := range sides {
			r, err := load(hc, side.url+"/schemas/ids/1", want, duration/rounds, workers)
			if err != nil {
				return err
			}
			*side.rate += r / rounds
		}
	}
	fmt.Printf("GET /schemas/ids/{id}  registry: %10.0f req/s   bare echo: %10.0f req/s   (%d workers, %s each, %d-byte body)\n",
		regRate, bareRate, workers, duration, len(want))
	fmt.Printf("ratio registry-get/bare-echo=%.2f\n", regRate/bareRate)
	if err := authCost(dir, st, hc, want, duration, workers); err != nil {
		return err
	}

	// A subject with `versions` versions, checked at FULL_TRANSITIVE.
	if _, err := call(hc, "PUT", reg.URL+"/config/checked-value", []byte(`{"compatibility":"NONE"}`)); err != nil {
		return err
	}
	for n := 1; n <= versions; n++ {
		if _, err := call(hc, "POST", reg.URL+"/subjects/checked-value/versions", body(version(n))); err != nil {
			return fmt.Errorf("version %d: %w", n, err)
		}
	}
	if _, err := call(hc, "PUT", reg.URL+"/config/checked-value", []byte(`{"compatibility":"FULL_TRANSITIVE"}`)); err != nil {
		return err
	}
	// A second server on the same store has compiled nothing yet: its
	// first check compiles every version, as after a restart.
	srv2, err := api.New(api.Config{Store: st, Workers: pool})
	if err != nil {
		return err
	}
	fresh := httptest.NewServer(srv2)
	defer fresh.Close()
	candidate := body(version(versions + 1))
	url := fresh.URL + "/compatibility/subjects/checked-value/versions"
	// A cold history longer than the request's time budget answers 503
	// while it compiles (the compiled versions are kept); the cold figure
	// is the time to the first answer that is not a 503.
	start := time.Now()
	out, err := call(hc, "POST", url, candidate)
	for tries := 0; err != nil && strings.Contains(err.Error(), ": 503 ") && tries < 100; tries++ {
		out, err = call(hc, "POST", url, candidate)
	}
	if err != nil {
		return err
	}
	cold := time.Since(start)
	if !bytes.Contains(out, []byte(`"is_compatible":true`)) {
		return fmt.Errorf("the candidate should be compatible: %s", out)
	}
	lat := make([]time.Duration, checks)
	for i := range lat {
		t0 := time.Now()
		if _, err := call(hc, "POST", url, candidate); err != nil {
			return err
		}
		lat[i] = time.Since(t0)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	fmt.Printf("FULL_TRANSITIVE check against %d versions: p50=%s p99=%s (n=%d; first check after a restart, compiling every version: %s)\n",
		versions, pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), checks, cold.Round(time.Millisecond))
	return nil
}

// inTempDir runs f in a fresh temporary directory, exiting on error.
func inTempDir(f func(dir string) error) {
	dir, err := os.MkdirTemp("", "registry-bench")
	if err == nil {
		err = f(dir)
		os.RemoveAll(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "registry-bench:", err)
		os.Exit(1)
	}
}

func body(schema string) []byte {
	b, _ := json.Marshal(map[string]string{"schemaType": "PROTOBUF", "schema": schema})
	return b
}

func call(hc *http.Client, method, url string, b []byte) ([]byte, error) {
	return callWith(hc, method, url, b, "")
}

func callWith(hc *http.Client, method, url string, b []byte, auth string) ([]byte, error) {
	req, err := http.NewRequestWithContext(context.Background(), method, url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", api.ContentType)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, out)
	}
	return out, nil
}

// load runs workers GET loops for d and returns requests per second. Every
// answer must equal want.
func load(hc *http.Client, url string, want []byte, d time.Duration, workers int) (float64, error) {
	return loadWith(hc, url, "", want, d, workers)
}

// loadWith is load sending auth as the Authorization header.
func loadWith(hc *http.Client, url, auth string, want []byte, d time.Duration, workers int) (float64, error) {
	var (
		n     atomic.Int64
		wg    sync.WaitGroup
		first atomic.Value
	)
	deadline := time.Now().Add(d)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				got, err := callWith(hc, "GET", url, nil, auth)
				if err == nil && !bytes.Equal(got, want) {
					err = fmt.Errorf("%s answered %q, want %q", url, got, want)
				}
				if err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return 0, err
	}
	return float64(n.Load()) / d.Seconds(), nil
}
