package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// scaleSchema is version v (1-based) of subject k: v fields, so each
// version is compatible with the one before it, in a package of the
// subject's own, so every (k, v) is a distinct schema with its own id.
func scaleSchema(k, v int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "syntax = \"proto3\";\npackage scale.s%d;\nmessage Event {\n", k)
	for i := 1; i <= v; i++ {
		fmt.Fprintf(&b, "  string f%d = %d;\n", i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

// scale registers schemas versions spread over subjects subjects (every
// subject gets schemas/subjects versions, in order, checked BACKWARD as
// by default) from writers clients against a server in its own process,
// then reports the registration rate, the server's resident memory, the
// time a restarted server takes to answer, and the p99 of GET by id and of
// look-ups under random access.
func scale(dir string, schemas, subjects, writers, samples int) error {
	db := filepath.Join(dir, "scale.db")
	c, err := startChild(db)
	if err != nil {
		return err
	}
	per := schemas / subjects
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: writers}}
	var (
		next   atomic.Int64
		wg     sync.WaitGroup
		mu     sync.Mutex
		regErr error
	)
	start := time.Now()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1)) - 1
				if k >= subjects {
					return
				}
				for v := 1; v <= per; v++ {
					if _, err := callAuth(hc, "POST", fmt.Sprintf("%s/subjects/s%d-value/versions", c.url, k), body(scaleSchema(k, v))); err != nil {
						mu.Lock()
						regErr = fmt.Errorf("subject %d version %d: %w", k, v, err)
						mu.Unlock()
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	if regErr != nil {
		c.stop()
		return regErr
	}
	rssAfter, err := c.rss()
	if err != nil {
		c.stop()
		return err
	}
	c.stop()
	fmt.Printf("scale: %d schemas in %d subjects registered by %d clients in %s: %.0f registrations/s; server RSS after %.0f MiB\n",
		schemas, subjects, writers, took.Round(time.Second), float64(schemas)/took.Seconds(), float64(rssAfter)/(1<<20))

	c, err = startChild(db)
	if err != nil {
		return err
	}
	defer c.stop()
	rssStart, err := c.rss()
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var byID, lookup []time.Duration
	for range samples {
		id := 1 + rng.IntN(schemas)
		t0 := time.Now()
		if _, err := call(hc, "GET", fmt.Sprintf("%s/schemas/ids/%d", c.url, id), nil); err != nil {
			return err
		}
		byID = append(byID, time.Since(t0))
		k, v := rng.IntN(subjects), 1+rng.IntN(per)
		t0 = time.Now()
		out, err := call(hc, "POST", fmt.Sprintf("%s/subjects/s%d-value", c.url, k), body(scaleSchema(k, v)))
		if err != nil {
			return err
		}
		lookup = append(lookup, time.Since(t0))
		if !bytes.Contains(out, []byte(fmt.Sprintf(`"version":%d`, v))) {
			return fmt.Errorf("lookup of subject %d version %d answered %s", k, v, out)
		}
	}
	rssEnd, err := c.rss()
	if err != nil {
		return err
	}
	fmt.Printf("scale: restart to first answer %s (RSS %.0f MiB); GET /schemas/ids/{id} p50=%s p99=%s; lookup p50=%s p99=%s (n=%d random each; RSS after %.0f MiB)\n",
		c.started.Round(time.Millisecond), float64(rssStart)/(1<<20),
		percentile(byID, 0.5).Round(10*time.Microsecond), percentile(byID, 0.99).Round(10*time.Microsecond),
		percentile(lookup, 0.5).Round(10*time.Microsecond), percentile(lookup, 0.99).Round(10*time.Microsecond),
		samples, float64(rssEnd)/(1<<20))
	return nil
}
