package main

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/msgcontract/msgcontract/registry/api"
)

// oneLine is a valid schema of about size bytes on one line.
func oneLine(size int) string {
	var b strings.Builder
	b.WriteString(`syntax = "proto3"; package hostile.v1; message M { `)
	for i := 1; b.Len() < size; i++ {
		if i == 19000 {
			i = 20000
		}
		fmt.Fprintf(&b, "string f%d = %d; ", i, i)
	}
	b.WriteString("}")
	return b.String()
}

func percentile(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return lat[int(p*float64(len(lat)-1))]
}

// attack sends 8 parallel near-4 MiB one-line schemas, without a token, to
// /compatibility and lookup for d, while one client GETs, against a
// registry in its own process; it reports how long each hostile request
// took to be answered, how they were answered, the server's CPU time and
// the GET latencies, with a quiet period of GETs first for comparison.
func attack(dir string, d time.Duration) error {
	c, err := startChild(filepath.Join(dir, "attack.db"))
	if err != nil {
		return err
	}
	defer c.stop()
	// The reader has a transport of its own: the attackers' connections
	// are closed after each refusal, and it must not share their pool.
	hc, reader := &http.Client{Transport: &http.Transport{}}, &http.Client{Transport: &http.Transport{}}
	if _, err := callAuth(hc, "POST", c.url+"/subjects/s/versions", body(version(3))); err != nil {
		return err
	}
	gets := func(stop <-chan struct{}) []time.Duration {
		var lat []time.Duration
		for {
			select {
			case <-stop:
				return lat
			default:
			}
			t0 := time.Now()
			if _, err := call(reader, "GET", c.url+"/schemas/ids/1", nil); err != nil {
				panic(err)
			}
			lat = append(lat, time.Since(t0))
			time.Sleep(2 * time.Millisecond) // a steady reader, not a flood
		}
	}
	quiet := make(chan struct{})
	time.AfterFunc(5*time.Second, func() { close(quiet) })
	base := gets(quiet)

	big := body(oneLine(api.DefaultBodyLimit - 64<<10))
	paths := []string{"/compatibility/subjects/s/versions/latest", "/subjects/s"}
	cpu0, err := c.cpu()
	if err != nil {
		return err
	}
	var (
		mu       sync.Mutex
		hostile  []time.Duration
		statuses = map[int]int{}
		wg       sync.WaitGroup
	)
	deadline := time.Now().Add(d)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; time.Now().Before(deadline); j++ {
				t0 := time.Now()
				req, _ := http.NewRequest("POST", c.url+paths[(i+j)%2], bytes.NewReader(big))
				req.Header.Set("Content-Type", api.ContentType)
				resp, err := hc.Do(req)
				status := -1
				if err == nil {
					status = resp.StatusCode
					resp.Body.Close()
				}
				mu.Lock()
				hostile = append(hostile, time.Since(t0))
				statuses[status]++
				mu.Unlock()
			}
		}()
	}
	over := make(chan struct{})
	var during []time.Duration
	done := make(chan struct{})
	go func() { during = gets(over); close(done) }()
	wg.Wait()
	close(over)
	<-done
	cpu1, err := c.cpu()
	if err != nil {
		return err
	}
	fmt.Printf("hostile schemas (8 clients, %d-byte one-line schemas to /compatibility and lookup, no token, %s): %d requests, answers %v, slowest answer %s, p99 %s\n",
		len(big), d, len(hostile), statuses, percentile(hostile, 1).Round(time.Millisecond), percentile(hostile, 0.99).Round(time.Millisecond))
	fmt.Printf("  server CPU during the attack, with its compilation workers (killed or running): %.1f s over %.1f s of wall time (%.2f cores)\n",
		(cpu1 - cpu0).Seconds(), d.Seconds(), (cpu1-cpu0).Seconds()/d.Seconds())
	fmt.Printf("  GET /schemas/ids/1: quiet p50=%s p99=%s (n=%d); under attack p50=%s p99=%s (n=%d)\n",
		percentile(base, 0.5).Round(10*time.Microsecond), percentile(base, 0.99).Round(10*time.Microsecond), len(base),
		percentile(during, 0.5).Round(10*time.Microsecond), percentile(during, 0.99).Round(10*time.Microsecond), len(during))
	return nil
}

// callAuth is call with the child's bearer token.
func callAuth(hc *http.Client, method, url string, b []byte) ([]byte, error) {
	return callWith(hc, method, url, b, "Bearer "+benchToken)
}
