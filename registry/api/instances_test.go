package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/internal/pgtest"
)

// TestTwoInstancesPostgres runs two registry servers on one PostgreSQL
// database, with writers split between them: ids are unique, every
// subject's versions are contiguous, each acknowledged registration is
// visible through the other instance at once, and a level or mode set
// through one governs the other (nothing is served from a stale cache).
func TestTwoInstancesPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	a := &client{t: t, url: startTestServerOn(t, dsn, api.Config{})}
	b := &client{t: t, url: startTestServerOn(t, dsn, api.Config{})}
	instances := []*client{a, b}
	// Each writer's schema has a field of its own, so versions replace
	// each other's fields: check nothing here, this is about the store.
	a.expect("PUT", "/config", map[string]string{"compatibility": "NONE"}, 200, 0)

	const writers, perWriter, subjects = 8, 6, 3
	var (
		mu  sync.Mutex
		ids = map[float64]string{}
		wg  sync.WaitGroup
	)
	errs := make(chan string, writers*perWriter)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			me, other := instances[w%2], instances[(w+1)%2]
			for i := range perWriter {
				subject := fmt.Sprintf("multi-%d", (w+i)%subjects)
				// Each schema adds a distinct field: compatible, and new.
				text := strings.Replace(v1, "int64 amount = 2;", fmt.Sprintf("int64 amount = 2;\n  string w%d_%d = %d;", w, i, 3+w*perWriter+i), 1)
				r := me.do("POST", "/subjects/"+subject+"/versions", reg(text))
				if r.status != 200 {
					errs <- fmt.Sprintf("register on instance %d: %d %s", w%2, r.status, r.body)
					continue
				}
				id := r.json(t).(map[string]any)["id"].(float64)
				// Read the acknowledged write through the other instance.
				if got := other.do("GET", fmt.Sprintf("/schemas/ids/%.0f/versions", id), nil); got.status != 200 || !strings.Contains(string(got.body), subject) {
					errs <- fmt.Sprintf("id %.0f registered on one instance is not visible on the other: %d %s", id, got.status, got.body)
				}
				mu.Lock()
				if prev, dup := ids[id]; dup {
					errs <- fmt.Sprintf("id %.0f handed out twice (%s and %s)", id, prev, text)
				}
				ids[id] = text
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	total := 0
	for s := range subjects {
		var got []int
		if err := jsonInto(b.expect("GET", fmt.Sprintf("/subjects/multi-%d/versions", s), nil, 200, 0).body, &got); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if v != i+1 {
				t.Fatalf("subject multi-%d versions %v are not 1..%d", s, got, len(got))
			}
		}
		total += len(got)
	}
	if total != writers*perWriter || len(ids) != total {
		t.Fatalf("%d versions and %d ids for %d registrations", total, len(ids), writers*perWriter)
	}

	// Levels and modes set through one instance govern the other.
	a.expect("PUT", "/config/multi-0", map[string]string{"compatibility": "FULL"}, 200, 0)
	if got := string(b.expect("GET", "/config/multi-0", nil, 200, 0).body); got != `{"compatibilityLevel":"FULL"}` {
		t.Fatalf("level set on A, B says %s", got)
	}
	b.expect("POST", "/subjects/multi-0/versions", reg(deleted), 409, api.CodeIncompatible)
	a.expect("PUT", "/mode/multi-1", map[string]string{"mode": "READONLY"}, 200, 0)
	b.expect("POST", "/subjects/multi-1/versions", reg(v1), 422, api.CodeOperationNotAllowed)
	a.expect("DELETE", "/mode/multi-1", nil, 200, 0)
	// The latest version seen through B follows deletes made through A.
	latest := func(c *client) float64 {
		return c.expect("GET", "/subjects/multi-0/versions/latest", nil, 200, 0).json(t).(map[string]any)["version"].(float64)
	}
	before := latest(b)
	a.expect("DELETE", "/subjects/multi-0/versions/latest", nil, 200, 0)
	if after := latest(b); after >= before {
		t.Fatalf("B still serves version %v as latest after A deleted it", after)
	}
}

func jsonInto(b []byte, v any) error { return json.Unmarshal(b, v) }
