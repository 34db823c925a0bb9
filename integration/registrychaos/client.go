package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// contentType is the Confluent API's media type.
const contentType = "application/vnd.schemaregistry.v1+json"

// apiClient speaks the Confluent Schema Registry API to one instance.
type apiClient struct {
	base string
	hc   *http.Client
}

func newAPIClient(addr string, timeout time.Duration) *apiClient {
	return &apiClient{
		base: "http://" + addr,
		hc: &http.Client{Timeout: timeout, Transport: &http.Transport{
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     30 * time.Second,
		}},
	}
}

// statusError is an answer other than 200.
type statusError struct {
	status int
	body   string
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

// do sends a request and decodes a 200's JSON body into out (when not
// nil). Any other status is a *statusError; a transport error (refused,
// reset, timed out) is returned as it is.
func (c *apiClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &statusError{status: resp.StatusCode, body: string(bytes.TrimSpace(b))}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: decode %q: %w", method, path, b, err)
	}
	return nil
}

// register is POST /subjects/{subject}/versions: the schema's id.
func (c *apiClient) register(ctx context.Context, subject, text string) (int64, error) {
	var out struct {
		ID int64 `json:"id"`
	}
	err := c.do(ctx, http.MethodPost, "/subjects/"+url.PathEscape(subject)+"/versions",
		map[string]string{"schemaType": "PROTOBUF", "schema": text}, &out)
	if err == nil && out.ID <= 0 {
		err = fmt.Errorf("register %s: a 200 without an id", subject)
	}
	return out.ID, err
}

// setGlobalLevel is PUT /config.
func (c *apiClient) setGlobalLevel(ctx context.Context, level string) error {
	return c.do(ctx, http.MethodPut, "/config", map[string]string{"compatibility": level}, nil)
}

// subjects is GET /subjects.
func (c *apiClient) subjects(ctx context.Context) ([]string, error) {
	var out []string
	err := c.do(ctx, http.MethodGet, "/subjects", nil, &out)
	return out, err
}

// versions reads an instance's subjects and each one's versions: the
// start of a view (readView) and of a probe.
func (c *apiClient) versions(ctx context.Context, source string) (View, error) {
	w := View{Source: source, Versions: map[string][]int{}, IDs: map[string]map[int]int64{}, Texts: map[int64]string{}}
	subjects, err := c.subjects(ctx)
	if err != nil {
		return View{}, fmt.Errorf("%s: GET /subjects: %w", source, err)
	}
	w.Subjects = subjects
	for _, s := range w.Subjects {
		var vs []int
		if err := c.do(ctx, http.MethodGet, "/subjects/"+url.PathEscape(s)+"/versions", nil, &vs); err != nil {
			return View{}, fmt.Errorf("%s: GET /subjects/%s/versions: %w", source, s, err)
		}
		w.Versions[s] = vs
	}
	return w, nil
}

// readers bounds the requests one view's reading has in flight.
const readers = 8

// readView reads an instance's whole content: GET /subjects, each
// subject's versions, each version's id, each id's schema.
func (c *apiClient) readView(ctx context.Context, source string) (View, error) {
	w, err := c.versions(ctx, source)
	if err != nil {
		return View{}, err
	}
	for _, s := range w.Subjects {
		w.IDs[s] = map[int]int64{}
	}

	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
		slots    = make(chan struct{}, readers)
	)
	each := func(f func() error) {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := f(); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, s := range w.Subjects {
		for _, v := range w.Versions[s] {
			each(func() error {
				var out struct {
					ID int64 `json:"id"`
				}
				path := "/subjects/" + url.PathEscape(s) + "/versions/" + strconv.Itoa(v)
				if err := c.do(ctx, http.MethodGet, path, nil, &out); err != nil {
					return fmt.Errorf("%s: GET %s: %w", source, path, err)
				}
				mu.Lock()
				w.IDs[s][v] = out.ID
				mu.Unlock()
				return nil
			})
		}
	}
	wg.Wait()
	if firstErr != nil {
		return View{}, firstErr
	}
	ids := map[int64]bool{}
	for _, byVersion := range w.IDs {
		for _, id := range byVersion {
			ids[id] = true
		}
	}
	for id := range ids {
		each(func() error {
			var out struct {
				Schema string `json:"schema"`
			}
			path := "/schemas/ids/" + strconv.FormatInt(id, 10)
			if err := c.do(ctx, http.MethodGet, path, nil, &out); err != nil {
				return fmt.Errorf("%s: GET %s: %w", source, path, err)
			}
			mu.Lock()
			w.Texts[id] = out.Schema
			mu.Unlock()
			return nil
		})
	}
	wg.Wait()
	return w, firstErr
}

// probe reads the part of a view that shows whether an instance has
// caught up, in a few requests: GET /subjects, each subject's versions,
// its latest version's id (GET /subjects/{s}/versions/latest) and that
// id's schema (GET /schemas/ids/{id}). probeOf reduces a whole view to
// the same part.
func (c *apiClient) probe(ctx context.Context, source string) (View, error) {
	w, err := c.versions(ctx, source)
	if err != nil {
		return View{}, err
	}
	for _, s := range w.Subjects {
		var latest struct {
			Version int   `json:"version"`
			ID      int64 `json:"id"`
		}
		if err := c.do(ctx, http.MethodGet, "/subjects/"+url.PathEscape(s)+"/versions/latest", nil, &latest); err != nil {
			return View{}, fmt.Errorf("%s: GET /subjects/%s/versions/latest: %w", source, s, err)
		}
		w.IDs[s] = map[int]int64{latest.Version: latest.ID}
		if _, done := w.Texts[latest.ID]; done {
			continue
		}
		var sc struct {
			Schema string `json:"schema"`
		}
		if err := c.do(ctx, http.MethodGet, "/schemas/ids/"+strconv.FormatInt(latest.ID, 10), nil, &sc); err != nil {
			return View{}, fmt.Errorf("%s: GET /schemas/ids/%d: %w", source, latest.ID, err)
		}
		w.Texts[latest.ID] = sc.Schema
	}
	return w, nil
}

// probeOf is the part of w that probe reads.
func probeOf(w View) View {
	p := View{Source: w.Source, Subjects: w.Subjects, Versions: w.Versions, IDs: map[string]map[int]int64{}, Texts: map[int64]string{}}
	for _, s := range w.Subjects {
		vs := w.Versions[s]
		if len(vs) == 0 {
			continue
		}
		last := vs[len(vs)-1]
		id := w.IDs[s][last]
		p.IDs[s] = map[int]int64{last: id}
		if text, ok := w.Texts[id]; ok {
			p.Texts[id] = text
		}
	}
	return p
}
