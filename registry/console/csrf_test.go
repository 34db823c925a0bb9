package console_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/console"
	"github.com/msgcontract/msgcontract/registry/store"
)

// csrfCookieName is the console's cookie with the browser's random value.
const csrfCookieName = "msgcontract_console_csrf"

// TestCSRF: a form post changes something only with the cookie the
// console gave the browser and the form token for that cookie, and only
// from the console's own site; a refusal says to reload the page.
func TestCSRF(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ck, tok := csrfPair(t, f.URL)
	other, otherTok := csrfPair(t, f.URL)
	if other.Value == ck.Value || otherTok == tok {
		t.Fatal("two browsers got the same cookie or token")
	}
	forged := &http.Cookie{Name: csrfCookieName, Value: strings.Repeat("A", 43)}
	replay := url.Values{"action": {"replay"}, "id": {f.DeadID}, "confirm": {"yes"}, "token": {token}}
	register := url.Values{"subject": {subject}, "schema": {paymentV1(t)}, "confirm": {"yes"}, "token": {token}}
	check := url.Values{"subject": {subject}, "schema": {paymentV1(t)}}
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	type form struct {
		path string
		v    url.Values
	}
	forms := []form{{"/ui/register", register}, {"/ui/dlq/apply", replay}, {"/ui/dlq/apply", withField(replay, "action", "purge")}, {"/ui/check", check}}
	for _, tc := range []struct {
		name   string
		header http.Header
		cookie *http.Cookie
		token  string
		want   string // in the refusal page
	}{
		{"no cookie, no token", nil, nil, "", "Reload the page"},
		{"cookie, no token", nil, ck, "", "Reload the page"},
		{"cookie, wrong token", nil, ck, "bm90LXRoZS10b2tlbg", "Reload the page"},
		{"token of another cookie", nil, ck, otherTok, "Reload the page"},
		{"token, no cookie", nil, nil, tok, "Reload the page"},
		{"planted cookie, its owner's token", nil, forged, tok, "Reload the page"},
		{"cross-site (Sec-Fetch-Site)", hdr("Sec-Fetch-Site", "cross-site"), ck, tok, "another site"},
		{"same-site but another origin (Sec-Fetch-Site)", hdr("Sec-Fetch-Site", "same-site"), ck, tok, "another site"},
		{"another Origin", hdr("Origin", "http://evil.example"), ck, tok, "another site"},
	} {
		for _, fm := range forms {
			status, body, _ := postRaw(t, f.URL+fm.path, tc.header, tc.cookie, withField(fm.v, "csrf", tc.token))
			if status != http.StatusForbidden {
				t.Errorf("%s, POST %s: HTTP %d, want 403\n%s", tc.name, fm.path, status, body)
				continue
			}
			if !strings.Contains(body, tc.want) || !strings.Contains(body, "changed nothing") {
				t.Errorf("%s, POST %s: the refusal does not say %q and that nothing changed:\n%s", tc.name, fm.path, tc.want, body)
			}
		}
	}
	ctx := context.Background()
	if rec, err := f.Queue.Get(ctx, f.DeadID); err != nil || rec.ReplayCount != 0 {
		t.Fatalf("a refused request replayed or purged the record (%v, %+v)", err, rec)
	}
	if _, err := f.Store.Versions(ctx, subject, false); err == nil {
		t.Fatal("a refused request registered the schema")
	}

	// With the cookie and its token, from the console's own page, the
	// forms work as before.
	same := hdr("Sec-Fetch-Site", "same-origin", "Origin", f.URL)
	if status, body, _ := postRaw(t, f.URL+"/ui/check", same, ck, withField(check, "csrf", tok)); status != http.StatusOK || !strings.Contains(body, "does not exist yet") {
		t.Fatalf("check: HTTP %d\n%s", status, body)
	}
	if status, body, _ := postRaw(t, f.URL+"/ui/register", same, ck, withField(register, "csrf", tok)); status != http.StatusSeeOther {
		t.Fatalf("register: HTTP %d\n%s", status, body)
	}
	// A tool that sends neither Sec-Fetch-Site nor Origin still needs
	// the token.
	if status, body, _ := postRaw(t, f.URL+"/ui/dlq/apply", nil, other, withField(replay, "csrf", otherTok)); status != http.StatusSeeOther {
		t.Fatalf("replay: HTTP %d\n%s", status, body)
	}
	if rec, err := f.Queue.Get(ctx, f.DeadID); err != nil || rec.ReplayCount != 1 {
		t.Fatalf("after the replay: %v, %+v", err, rec)
	}
}

// newConsole is a console on an empty registry, for tests that need
// only the console's own handler.
func newConsole(t *testing.T, cfg console.Config) *console.Console {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := api.New(api.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store, cfg.API = st, srv
	c, err := console.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// serve runs one request through h.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestCSRFCookie: a page gives a browser without the cookie one, scoped
// to the console, unreadable by scripts, never sent from another site,
// and Secure over TLS; a browser with one keeps it.
func TestCSRFCookie(t *testing.T) {
	t.Parallel()
	c := newConsole(t, console.Config{})
	for _, tc := range []struct {
		url    string
		secure bool
	}{
		{"http://registry.example/ui/check", false},
		{"https://registry.example/ui/", true},
	} {
		w := serve(c, httptest.NewRequest(http.MethodGet, tc.url, nil))
		cks := w.Result().Cookies()
		if len(cks) != 1 || cks[0].Name != csrfCookieName {
			t.Fatalf("GET %s sets %v, want one %s cookie", tc.url, w.Header().Values("Set-Cookie"), csrfCookieName)
		}
		ck := cks[0]
		if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/ui/" || ck.Secure != tc.secure || len(ck.Value) < 43 {
			t.Errorf("GET %s: cookie %s, want HttpOnly, SameSite=Strict, Path=/ui/, Secure=%v, 32 random bytes", tc.url, ck, tc.secure)
		}
		again := httptest.NewRequest(http.MethodGet, tc.url, nil)
		again.AddCookie(ck)
		if w := serve(c, again); len(w.Header().Values("Set-Cookie")) != 0 {
			t.Errorf("GET %s with the cookie replaces it: %v", tc.url, w.Header().Values("Set-Cookie"))
		}
	}
	if w := serve(c, httptest.NewRequest(http.MethodGet, "/ui/static/console.css", nil)); len(w.Header().Values("Set-Cookie")) != 0 {
		t.Errorf("a static file sets a cookie: %v", w.Header().Values("Set-Cookie"))
	}
}

// pair is the cookie and form token console c hands a browser.
func pair(t *testing.T, c http.Handler) (*http.Cookie, string) {
	t.Helper()
	w := serve(c, httptest.NewRequest(http.MethodGet, "/ui/check", nil))
	m := csrfFieldRE.FindStringSubmatch(w.Body.String())
	cks := w.Result().Cookies()
	if m == nil || len(cks) != 1 {
		t.Fatalf("GET /ui/check gave no token or cookie:\n%s", w.Body)
	}
	return cks[0], m[1]
}

// TestCSRFKey: consoles that share Config.CSRFKey (instances behind one
// load balancer) accept each other's forms; consoles with their own
// random keys do not; a short key is refused with what to do.
func TestCSRFKey(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{7}, 32)
	a, b := newConsole(t, console.Config{CSRFKey: key}), newConsole(t, console.Config{CSRFKey: key})
	x, y := newConsole(t, console.Config{}), newConsole(t, console.Config{})
	post := func(c http.Handler, ck *http.Cookie, tok string) int {
		form := url.Values{"subject": {subject}, "schema": {"syntax = \"proto3\";\nmessage M {}\n"}, "csrf": {tok}}
		r := httptest.NewRequest(http.MethodPost, "/ui/check", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(ck)
		return serve(c, r).Code
	}
	for _, tc := range []struct {
		name     string
		from, to http.Handler
		want     int
	}{
		{"shared key, same instance", a, a, http.StatusOK},
		{"shared key, other instance", a, b, http.StatusOK},
		{"random keys, same instance", x, x, http.StatusOK},
		{"random keys, other instance", x, y, http.StatusForbidden},
		{"shared key to random key", a, x, http.StatusForbidden},
	} {
		ck, tok := pair(t, tc.from)
		if got := post(tc.to, ck, tok); got != tc.want {
			t.Errorf("%s: HTTP %d, want %d", tc.name, got, tc.want)
		}
	}
	cfg := console.Config{Store: &store.Store{}, API: http.NotFoundHandler(), CSRFKey: []byte("short")}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "at least 32 random bytes") {
		t.Errorf("a 5-byte CSRFKey: %v", err)
	}
}

// securityHeaders is what every console response must carry.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "same-origin",
	"X-Frame-Options":         "DENY",
}

// TestSecurityHeaders: pages, static files, error pages, refusals and
// redirects all carry the security headers.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.register(t, "a/b", paymentV1(t))
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/ui/", 200},
		{"GET", "/ui/subject?s=a%2Fb", 200},
		{"GET", "/ui/subject?s=a%252Fb", 301},
		{"GET", "/ui/version?s=a%2Fb&v=1", 200},
		{"GET", "/ui/contract?s=a%2Fb&v=1", 200},
		{"GET", "/ui/diff?s=a%2Fb", 200},
		{"GET", "/ui/check", 200},
		{"GET", "/ui/dlq", 200},
		{"GET", "/ui/dlq/record?id=" + f.DeadID, 200},
		{"GET", "/ui/dlq/confirm?action=replay&id=" + f.DeadID, 200},
		{"GET", "/ui/static/console.css", 200},
		{"GET", "/ui/static/console.js", 200},
		{"GET", "/ui/static/nothing.png", 404},
		{"GET", "/ui/subject?s=nope", 404},
		{"GET", "/ui/nowhere", 404},
		{"POST", "/ui/register", 403},
		{"POST", "/ui/check", 403},
	} {
		req, _ := http.NewRequest(tc.method, f.URL+tc.path, nil)
		if tc.method == "POST" {
			req.Header.Set("Sec-Fetch-Site", "same-origin")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: HTTP %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
		for k, v := range securityHeaders {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s %s: %s is %q, want %q", tc.method, tc.path, k, got, v)
			}
		}
	}
}

var (
	startTagRE = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9-]*)((?:\s[^>]*)?)>`)
	attrValRE  = regexp.MustCompile(`=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+)`)
	attrNameRE = regexp.MustCompile(`(?i)(?:^|\s)(style|on[a-zA-Z]+)(?:\s*=|\s|/|$)`)
	styleTagRE = regexp.MustCompile(`(?i)<style[\s>]`)
)

// inline lists what the Content-Security-Policy would block in page: a
// <style> element, a <script> without src, and style= and on...=
// attributes on any element, SVG included. html/template escapes < in
// text and > in attribute values, so a start tag runs to the next >.
func inline(page string) []string {
	var found []string
	if loc := styleTagRE.FindStringIndex(page); loc != nil {
		found = append(found, page[loc[0]:min(len(page), loc[0]+60)])
	}
	for _, m := range startTagRE.FindAllStringSubmatch(page, -1) {
		tag, attrs := strings.ToLower(m[1]), attrValRE.ReplaceAllString(m[2], "=")
		if tag == "script" && !regexp.MustCompile(`(?:^|\s)src\s*=`).MatchString(attrs) {
			found = append(found, m[0])
		}
		if attrNameRE.MatchString(attrs) {
			found = append(found, m[0])
		}
	}
	return found
}

// TestInlineFinds: the scanner of TestNoInlineScriptOrStyle finds what
// it looks for and nothing else.
func TestInlineFinds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		html string
		n    int
	}{
		{`<p style="color:red">x</p>`, 1},
		{`<rect x="1" style='fill:red'/>`, 1},
		{`<div data-x="1" hidden style=color:red>`, 1},
		{`<button onclick="go()">`, 1},
		{`<body ONLOAD="x()">`, 1},
		{`<svg onload=alert(1)>`, 1},
		{`<script>alert(1)</script>`, 1},
		{`<script type="module">x()</script>`, 1},
		{`<STYLE>p{}</STYLE>`, 1},
		{`<style media="x">p{}</style>`, 1},
		{`<script src="/ui/static/console.js" defer></script>`, 0},
		{`<p title="style=x onclick=y">string one = 1; option style = 2;</p>`, 0},
		{`<rect class="delay" fill="red" stroke="#000" width="3"/>`, 0},
		{`<input name="online" data-onx="1">`, 0},
		{`<pre>&lt;style&gt; &lt;p onclick=&#34;x&#34;&gt;</pre>`, 0},
	} {
		if got := inline(tc.html); len(got) != tc.n {
			t.Errorf("%s: found %q, want %d", tc.html, got, tc.n)
		}
	}
}

// TestNoInlineScriptOrStyle renders every kind of page and finds nothing
// the Content-Security-Policy would block.
func TestNoInlineScriptOrStyle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.register(t, subject, paymentV1(t))
	f.setLevel(t, "NONE")
	f.register(t, subject, paymentV2(t))
	f.setLevel(t, "BACKWARD")
	pages := map[string]string{}
	for _, path := range []string{
		"/ui/", "/ui/?q=order", "/ui/subject?s=" + subject, "/ui/version?s=" + subject + "&v=1", "/ui/version?s=" + subject + "&v=2",
		"/ui/diff?s=" + subject, "/ui/diff?s=" + subject + "&from=1&to=2&all=1", "/ui/contract?s=" + subject + "&v=2",
		"/ui/check", "/ui/check?s=" + subject, "/ui/dlq", "/ui/dlq?reason=retries_exhausted", "/ui/dlq/record?id=" + f.DeadID,
		"/ui/dlq/confirm?action=replay&id=" + f.DeadID, "/ui/dlq/confirm?action=purge&id=" + f.DeadID,
		"/ui/subject?s=nope", "/ui/dlq/confirm?action=nothing",
	} {
		_, pages["GET "+path] = get(t, f.URL+path)
	}
	for name, form := range map[string]url.Values{
		"violations (v1 after v2)": {"subject": {subject}, "schema": {paymentV1(t)}},
		"compatible":               {"subject": {subject}, "schema": {paymentV2(t)}},
		"new subject":              {"subject": {"new-value"}, "schema": {paymentV1(t)}},
		"invalid":                  {"subject": {subject}, "schema": {"syntax = \"proto3\";\nmessage {"}},
	} {
		_, pages["POST /ui/check, "+name] = post(t, f.URL+"/ui/check", "", form)
	}
	_, pages["POST /ui/register, wrong token"] = post(t, f.URL+"/ui/register", "", url.Values{"subject": {subject}, "schema": {paymentV1(t)}, "confirm": {"yes"}, "token": {"nope"}})
	_, pages["POST without a token"], _ = postRaw(t, f.URL+"/ui/register", nil, nil, url.Values{})
	_, pages["POST cross-site"], _ = postRaw(t, f.URL+"/ui/register", http.Header{"Sec-Fetch-Site": {"cross-site"}}, nil, url.Values{})
	for name, body := range pages {
		if !strings.Contains(body, "</html>") {
			t.Errorf("%s: not a page:\n%s", name, body)
			continue
		}
		if found := inline(body); len(found) > 0 {
			t.Errorf("%s has what the Content-Security-Policy blocks: %q", name, found)
		}
	}
	for _, want := range []string{"<svg", "<table class=\"diff\"", "tr class=\"violation\""} {
		n := 0
		for _, body := range pages {
			if strings.Contains(body, want) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("no page has %s: the test no longer covers it", want)
		}
	}
}
