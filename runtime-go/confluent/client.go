package confluent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// RefusedError is the registry's answer to a request it refused (an HTTP
// 4xx: unknown subject, version or id). A consumer dead-letters on it; any
// other failure (network, 5xx) is the registry's trouble, not the
// message's, and is worth another try.
type RefusedError struct {
	Status    int
	ErrorCode int
	Message   string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("schema registry refused: HTTP %d, error_code %d: %s", e.Status, e.ErrorCode, e.Message)
}

// Client talks to a Confluent-compatible schema registry (msgcontract's
// own, or Confluent's). It is safe for concurrent use.
type Client struct {
	base string
	http *http.Client

	mu      sync.Mutex
	ids     map[string]int32           // "subject\x00version" -> id
	holders map[int32][]SubjectVersion // id -> the subject versions holding it
}

// SubjectVersion is a subject's version that holds a schema id, as
// `GET /schemas/ids/{id}/versions` lists them.
type SubjectVersion struct {
	Subject string `json:"subject"`
	Version int32  `json:"version"`
}

// NewClient returns a client of the registry at baseURL. httpc nil means a
// client with a 10 s timeout.
func NewClient(baseURL string, httpc *http.Client) *Client {
	if httpc == nil {
		httpc = &http.Client{Timeout: 10 * time.Second}
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), http: httpc,
		ids: map[string]int32{}, holders: map[int32][]SubjectVersion{}}
}

// ID returns the schema id of subject's version (0: the latest), cached:
// a later registration does not change what this client answers for
// "latest", as with Confluent's use.latest.version and no cache TTL.
func (c *Client) ID(ctx context.Context, subject string, version int32) (int32, error) {
	k := subject + "\x00" + strconv.Itoa(int(version))
	c.mu.Lock()
	id, ok := c.ids[k]
	c.mu.Unlock()
	if ok {
		return id, nil
	}
	v := "latest"
	if version > 0 {
		v = strconv.Itoa(int(version))
	}
	var out struct {
		ID int32 `json:"id"`
	}
	if err := c.get(ctx, "/subjects/"+url.PathEscape(subject)+"/versions/"+v, &out); err != nil {
		return 0, fmt.Errorf("confluent: id of %s version %s: %w", subject, v, err)
	}
	c.mu.Lock()
	c.ids[k] = out.ID
	c.mu.Unlock()
	return out.ID, nil
}

// Versions returns the subject versions that hold schema id, cached: an
// id never changes its schema, so the answer is kept for the client's
// lifetime.
func (c *Client) Versions(ctx context.Context, id int32) ([]SubjectVersion, error) {
	c.mu.Lock()
	out, ok := c.holders[id]
	c.mu.Unlock()
	if ok {
		return out, nil
	}
	if err := c.get(ctx, "/schemas/ids/"+strconv.Itoa(int(id))+"/versions", &out); err != nil {
		return nil, fmt.Errorf("confluent: subjects of schema id %d: %w", id, err)
	}
	c.mu.Lock()
	c.holders[id] = out
	c.mu.Unlock()
	return out, nil
}

// Subjects returns the subjects that hold schema id, cached.
func (c *Client) Subjects(ctx context.Context, id int32) ([]string, error) {
	vs, err := c.Versions(ctx, id)
	if err != nil {
		return nil, err
	}
	var s []string
	for _, v := range vs {
		if !slices.Contains(s, v.Subject) {
			s = append(s, v.Subject)
		}
	}
	return s, nil
}

// CheckSubject returns subject's version that holds id (0 when the
// registry's answer names no version) and nil when id belongs to subject;
// a *RefusedError (wrapped) when it does not or the registry refuses the
// id, and another error when the registry cannot be asked.
func (c *Client) CheckSubject(ctx context.Context, id int32, subject string) (int32, error) {
	vs, err := c.Versions(ctx, id)
	if err != nil {
		return 0, err
	}
	found, version := false, int32(0)
	for _, v := range vs {
		if v.Subject == subject {
			// An id is held by one version of a subject unless it was
			// registered again after a deletion; any of them is the
			// same schema, and the newest is taken.
			found, version = true, max(version, v.Version)
		}
	}
	if !found {
		subs, _ := c.Subjects(ctx, id)
		return 0, &RefusedError{Message: fmt.Sprintf("schema id %d belongs to %v, not to the event's subject %s", id, subs, subject)}
	}
	return version, nil
}

func (c *Client) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		re := &RefusedError{Status: resp.StatusCode, Message: strings.TrimSpace(string(body))}
		var e struct {
			ErrorCode int    `json:"error_code"`
			Message   string `json:"message"`
		}
		if json.Unmarshal(body, &e) == nil && e.Message != "" {
			re.ErrorCode, re.Message = e.ErrorCode, e.Message
		}
		return re
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return json.Unmarshal(body, out)
}

// IsRefused reports whether err carries the registry's refusal.
func IsRefused(err error) bool {
	var re *RefusedError
	return errors.As(err, &re)
}
