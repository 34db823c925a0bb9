package console_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/registry/store"
)

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends a form as the console's own page does: with the browser's
// console cookie and the form token for it, and Origin when given.
func post(t *testing.T, u, origin string, form url.Values) (int, string) {
	t.Helper()
	ck, tok := csrfPair(t, u)
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	status, body, _ := postRaw(t, u, h, ck, withField(form, "csrf", tok))
	return status, body
}

// postRaw sends form with the header and, when not nil, the cookie,
// without following a redirect; it returns the status, the body and the
// Location.
func postRaw(t *testing.T, u string, h http.Header, ck *http.Cookie, form url.Values) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	for k, vs := range h {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if ck != nil {
		req.AddCookie(ck)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Location")
}

var csrfFieldRE = regexp.MustCompile(`<input type="hidden" name="csrf" value="([^"]+)">`)

// csrfPair is what a browser gets from the check form of the console
// that serves u: the console's cookie and the form token for it.
func csrfPair(t *testing.T, u string) (*http.Cookie, string) {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(pu.Scheme + "://" + pu.Host + "/ui/check")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := csrfFieldRE.FindSubmatch(b)
	if m == nil {
		t.Fatalf("the check form has no csrf field:\n%s", b)
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == csrfCookieName {
			return ck, string(m[1])
		}
	}
	t.Fatalf("GET /ui/check set no %s cookie (Set-Cookie: %q)", csrfCookieName, resp.Header.Values("Set-Cookie"))
	return nil, ""
}

// withField is a copy of form with key set to value, or without key
// when value is "".
func withField(form url.Values, key, value string) url.Values {
	out := url.Values{}
	for k, vs := range form {
		out[k] = vs
	}
	if value == "" {
		out.Del(key)
	} else {
		out.Set(key, value)
	}
	return out
}

// TestWritesNeedTokenAndConfirmation: replaying, purging and registering
// change nothing without the confirmation, with a wrong token, or from
// another site's page.
func TestWritesNeedTokenAndConfirmation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	replay := url.Values{"action": {"replay"}, "id": {f.DeadID}, "confirm": {"yes"}, "token": {token}}
	register := url.Values{"subject": {subject}, "schema": {paymentV1(t)}, "confirm": {"yes"}, "token": {token}}
	without := withField
	for _, tc := range []struct {
		name, path, origin string
		form               url.Values
		status             int
	}{
		{"replay unconfirmed", "/ui/dlq/apply", "", without(replay, "confirm", ""), http.StatusBadRequest},
		{"replay wrong token", "/ui/dlq/apply", "", without(replay, "token", "nope"), http.StatusUnauthorized},
		{"replay no token", "/ui/dlq/apply", "", without(replay, "token", ""), http.StatusUnauthorized},
		{"replay from another site", "/ui/dlq/apply", "http://evil.example", replay, http.StatusForbidden},
		{"purge wrong token", "/ui/dlq/apply", "", without(without(replay, "action", "purge"), "token", "nope"), http.StatusUnauthorized},
		{"register unconfirmed", "/ui/register", "", without(register, "confirm", ""), http.StatusBadRequest},
		{"register wrong token", "/ui/register", "", without(register, "token", "nope"), http.StatusUnauthorized},
	} {
		status, body := post(t, f.URL+tc.path, tc.origin, tc.form)
		if status != tc.status {
			t.Errorf("%s: HTTP %d, want %d\n%s", tc.name, status, tc.status, body)
		}
	}
	ctx := context.Background()
	rec, err := f.Queue.Get(ctx, f.DeadID)
	if err != nil || rec.ReplayCount != 0 {
		t.Fatalf("a refused request replayed the record (%v, %+v)", err, rec)
	}
	if _, err := f.Store.Versions(ctx, subject, false); err == nil {
		t.Fatal("a refused request registered the schema")
	}
	// With everything right, both go through, from the same origin too.
	if status, body := post(t, f.URL+"/ui/register", f.URL, register); status != http.StatusSeeOther {
		t.Fatalf("register: HTTP %d\n%s", status, body)
	}
	if status, body := post(t, f.URL+"/ui/dlq/apply", f.URL, replay); status != http.StatusSeeOther {
		t.Fatalf("replay: HTTP %d\n%s", status, body)
	}
	if rec, err := f.Queue.Get(ctx, f.DeadID); err != nil || rec.ReplayCount != 1 {
		t.Fatalf("after the replay: %v, %+v", err, rec)
	}
	purge := without(replay, "action", "purge")
	if status, body := post(t, f.URL+"/ui/dlq/apply", f.URL, purge); status != http.StatusSeeOther {
		t.Fatalf("purge: HTTP %d\n%s", status, body)
	}
	if _, err := f.Queue.Get(ctx, f.DeadID); err == nil {
		t.Fatal("the purged record is still there")
	}
}

// TestManySubjects: 10,000 subjects list a page at a time, and search,
// prefix and page links narrow them.
func TestManySubjects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	const n = 10000
	for i := range n {
		team := []string{"billing", "orders", "shipping", "search"}[i%4]
		name := fmt.Sprintf("%s.event-%05d-value", team, i)
		text := fmt.Sprintf("syntax = \"proto3\";\npackage t%d;\nmessage M {}\n", i)
		if _, err := f.Store.Register(ctx, name, store.Schema{Type: "PROTOBUF", Text: text}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		query string
		want  []string
		rows  int
	}{
		{"", []string{"10000 of 10000 subjects, showing 1–20", "page 1 of 500", "billing.event-00000-value"}, 20},
		{"?page=500", []string{"showing 9981–10000", "page 500 of 500"}, 20},
		{"?prefix=orders.", []string{"2500 of 10000 subjects", "orders.event-00001-value"}, 20},
		{"?q=EVENT-0999", []string{"10 of 10000 subjects", "search.event-09999-value"}, 10},
		{"?q=nothing-like-this", []string{"0 of 10000 subjects", "No subject matches"}, 0},
	} {
		start := time.Now()
		status, body := get(t, f.URL+"/ui/"+tc.query)
		t.Logf("/ui/%s over %d subjects: %s (logged, not asserted)", tc.query, n, time.Since(start))
		if status != http.StatusOK {
			t.Fatalf("%s: HTTP %d", tc.query, status)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, w) {
				t.Errorf("/ui/%s does not show %q", tc.query, w)
			}
		}
		if rows := strings.Count(body, "<tr data-href="); rows != tc.rows {
			t.Errorf("/ui/%s lists %d rows, want %d", tc.query, rows, tc.rows)
		}
	}
}

// TestNotFound: unknown subjects, versions and records answer 404 pages
// that say what is missing.
func TestNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, path := range []string{"/ui/subject?s=nope", "/ui/version?s=nope&v=1", "/ui/diff?s=nope", "/ui/contract?s=nope&v=1", "/ui/dlq/record?id=999"} {
		status, body := get(t, f.URL+path)
		if status != http.StatusNotFound || !strings.Contains(body, "not found") {
			t.Errorf("%s: HTTP %d\n%s", path, status, body)
		}
	}
	// The REST API still answers next to the console.
	if status, _ := get(t, f.URL+"/subjects"); status != http.StatusOK {
		t.Errorf("GET /subjects next to the console: HTTP %d", status)
	}
}

// TestDiffFolds: the diff folds unchanged runs behind a link to the
// unfolded view, which shows every line.
func TestDiffFolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.setLevel(t, "NONE")
	for _, text := range []string{paymentV1(t), paymentV2(t)} {
		form := url.Values{"subject": {subject}, "schema": {text}, "confirm": {"yes"}, "token": {token}}
		if status, body := post(t, f.URL+"/ui/register", "", form); status != http.StatusSeeOther {
			t.Fatalf("register: HTTP %d\n%s", status, body)
		}
	}
	_, folded := get(t, f.URL+"/ui/diff?s="+subject)
	if !strings.Contains(folded, "unchanged lines") || !strings.Contains(folded, "&amp;all=1#N") {
		t.Errorf("the diff folds nothing or has no link to unfold")
	}
	last := strings.Count(paymentV2(t), "\n")
	_, all := get(t, f.URL+"/ui/diff?s="+subject+"&from=1&to=2&all=1")
	if strings.Contains(all, "unchanged lines") || !strings.Contains(all, fmt.Sprintf(`id="N%d"`, last)) {
		t.Errorf("the unfolded diff still folds, or misses line %d", last)
	}
	if !strings.Contains(all, "EVENT_BIZ_KEY_CHANGED") {
		t.Error("the unfolded diff lost the violation")
	}
}
