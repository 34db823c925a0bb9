//go:build security

package registrysecurity

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/msgcontract/msgcontract/registry/access"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/store"
)

// TestSecurityBadCredentials: each way a credential can be wrong is a
// 401 with Confluent's code and a message naming what was wrong; a
// certificate from another CA does not get past the TLS handshake.
func TestSecurityBadCredentials(t *testing.T) {
	w := newWorld(t, "")
	base := w.server(t)
	other := newIDP(t, "k1") // same kid, another key
	expired := goodClaims("jwt-writer")
	expired.Expiry = jwt.NewNumericDate(time.Now().Add(-time.Hour))
	noExp := goodClaims("jwt-writer")
	noExp.Expiry = nil
	wrongAud := goodClaims("jwt-writer")
	wrongAud.Audience = jwt.Audience{"another-service"}
	wrongIss := goodClaims("jwt-writer")
	wrongIss.Issuer = "https://evil.example.test"
	future := goodClaims("jwt-writer")
	future.NotBefore = jwt.NewNumericDate(time.Now().Add(time.Hour))
	tokenWriter := w.byName["bearer-writer"].bearer
	_, tid, _ := access.NewToken()
	sameIDWrongSecret := strings.Replace(tokenWriter, tokenWriter[len(tokenWriter)-8:], "AAAAAAAA", 1)
	for _, tc := range []struct {
		name, authorization, want string
	}{
		{"basic, wrong password", basicHeader("basic-writer", "guess"), "wrong user name, password or token"},
		{"basic, unknown user", basicHeader("nobody", "pw"), "not one of the access file's"},
		{"basic, not base64", "Basic !!!", "not base64"},
		{"bearer, unknown token", "Bearer mct_" + tid + "_x", "not one of the access file's"},
		{"bearer, right id wrong secret", "Bearer " + sameIDWrongSecret, "wrong user name, password or token"},
		{"bearer, not a token", "Bearer hello", "not one of the access file's"},
		{"jwt, expired", "Bearer " + w.idp.sign(t, "k1", expired), "expired"},
		{"jwt, no exp", "Bearer " + w.idp.sign(t, "k1", noExp), "no exp claim"},
		{"jwt, wrong audience", "Bearer " + w.idp.sign(t, "k1", wrongAud), "aud"},
		{"jwt, wrong issuer", "Bearer " + w.idp.sign(t, "k1", wrongIss), "iss"},
		{"jwt, not yet valid", "Bearer " + w.idp.sign(t, "k1", future), "not valid"},
		{"jwt, unknown kid", "Bearer " + w.idp.sign(t, "k2", goodClaims("jwt-writer")), `no key with kid`},
		{"jwt, forged with another key", "Bearer " + other.sign(t, "k1", goodClaims("jwt-admin")), "does not verify"},
		{"jwt, alg none", "Bearer " + unsigned(goodClaims("jwt-admin")), "accepted algorithm"},
		{"unknown scheme", "Digest user=x", "not one the registry takes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := &identity{name: "raw"}
			st, body := w.doRaw(t, base, id, tc.authorization, "GET", "/subjects")
			expectDenied(t, st, body, 401, access.CodeUnauthorized)
			if !strings.Contains(string(body), tc.want) {
				t.Errorf("the 401 does not say %q: %s", tc.want, body)
			}
		})
	}
	t.Run("certificate from another CA", func(t *testing.T) {
		rogue := newCA(t, "rogue").issue(t, "mtls-admin", false)
		c := w.client(nil)
		defer c.CloseIdleConnections()
		// Sent even though the server names other CAs (Go's client
		// would otherwise keep it back and go anonymous).
		c.Transport.(*http.Transport).TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			return &rogue, nil
		}
		resp, err := c.Get(base + "/subjects")
		if err == nil {
			resp.Body.Close()
			t.Fatalf("a certificate of another CA was accepted: %d", resp.StatusCode)
		}
	})
}

func basicHeader(user, password string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, password)
	return r.Header.Get("Authorization")
}

// unsigned is a JWT with alg "none".
func unsigned(c claims) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none", "typ": "JWT"}) + "." + enc(c) + "."
}

// doRaw sends a request with the Authorization header given as is.
func (w *world) doRaw(t *testing.T, base string, id *identity, authorization, method, path string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, nil)
	must(t, err)
	req.Header.Set("Authorization", authorization)
	c := w.client(id.cert)
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	must(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Bytes()
}

// TestSecurityRateLimit: past its burst a principal gets 429 with
// Retry-After, while another principal is not slowed; a principal's own
// limit overrides the default; failed logins spend the address's
// anonymous budget.
func TestSecurityRateLimit(t *testing.T) {
	w := newWorld(t, "rate_limit:\n  rps: 0.05\n  burst: 3\n  principals:\n    user:basic-admin: {rps: 1000, burst: 1000}\n")
	base := w.server(t) // seeding as basic-admin: its own, larger limit
	reader, writer := w.byName["basic-reader"], w.byName["jwt-writer"]
	for i := range 3 {
		if st, body := w.do(t, base, reader, "GET", "/subjects", ""); st != 200 {
			t.Fatalf("request %d within the burst: %d %s", i+1, st, body)
		}
	}
	st, body, h := w.doHeader(t, base, reader, "GET", "/subjects", "")
	expectDenied(t, st, body, 429, access.CodeTooManyRequests)
	if h.Get("Retry-After") == "" || h.Get("Retry-After") == "0" {
		t.Errorf("429 without a Retry-After: %q", h.Get("Retry-After"))
	}
	if !strings.Contains(string(body), "user:basic-reader") {
		t.Errorf("the 429 does not name the principal: %s", body)
	}
	if st, body := w.do(t, base, writer, "GET", "/subjects", ""); st != 200 {
		t.Fatalf("another principal was limited too: %d %s", st, body)
	}
	for i := range 3 {
		if st, _ := w.doRaw(t, base, &identity{}, basicHeader("basic-reader", "guess"), "GET", "/subjects"); st != 401 {
			t.Fatalf("failed login %d: %d, want 401", i+1, st)
		}
	}
	if st, body := w.doRaw(t, base, &identity{}, basicHeader("basic-writer", "guess"), "GET", "/subjects"); st != 429 {
		t.Fatalf("guessing past the anonymous budget: %d %s, want 429", st, body)
	}
}

// TestSecurityReload: a changed access file takes effect without a
// restart (a new grant, a JWKS with the provider's next key); a file that
// does not load leaves the rules in force and says where it is wrong.
func TestSecurityReload(t *testing.T) {
	w := newWorld(t, "")
	base := w.server(t)
	reader := w.byName["basic-reader"]
	if st, _ := w.do(t, base, reader, "POST", "/subjects/pay-value/versions", schemaBody(payV2)); st != 403 {
		t.Fatalf("reader registered before the grant: %d", st)
	}
	orig, err := os.ReadFile(w.file)
	must(t, err)
	write := func(data []byte) {
		t.Helper()
		// A later modification time, whatever the file system's clock
		// granularity.
		must(t, os.WriteFile(w.file, data, 0o600))
		later := time.Now().Add(time.Duration(w.guard.Reloads()) * time.Second)
		must(t, os.Chtimes(w.file, later, later))
	}
	write(append(append([]byte{}, orig...), "  - to: [user:basic-reader]\n    role: writer\n    subjects: [\"pay-\"]\n"...))
	if changed, err := w.guard.Reload(); !changed || err != nil {
		t.Fatalf("reload: changed=%v err=%v", changed, err)
	}
	if st, body := w.do(t, base, reader, "POST", "/subjects/pay-value/versions", schemaBody(payV2)); st != 200 {
		t.Fatalf("the new grant did not take effect: %d %s", st, body)
	}
	// A broken file: the rules in force stay, the error has line:col.
	write(append(append([]byte{}, orig...), "  - to: [user:basic-reader]\n    role: owner\n"...))
	_, err = w.guard.Reload()
	if err == nil || !strings.Contains(err.Error(), "access.yaml:") || !strings.Contains(err.Error(), `"owner"`) {
		t.Fatalf("a broken access file: %v; want an error naming the file, line and role", err)
	}
	if st, _ := w.do(t, base, reader, "GET", "/subjects", ""); st != 200 {
		t.Fatalf("a broken file changed the rules in force: %d", st)
	}
	// Key rotation: a token signed with the provider's next key (k2) is
	// refused until the JWKS file holds k2.
	next := w.idp.sign(t, "k2", goodClaims("jwt-admin"))
	if st, _ := w.doRaw(t, base, &identity{}, "Bearer "+next, "GET", "/subjects"); st != 401 {
		t.Fatalf("a token of an unknown key: %d, want 401", st)
	}
	write(orig)
	jwks := filepath.Join(w.dir, "jwks.json")
	must(t, os.WriteFile(jwks, w.idp.jwks(t, "k1", "k2"), 0o600))
	later := time.Now().Add(time.Hour)
	must(t, os.Chtimes(jwks, later, later))
	if changed, err := w.guard.Reload(); !changed || err != nil {
		t.Fatalf("reload after rotation: changed=%v err=%v", changed, err)
	}
	if st, body := w.doRaw(t, base, &identity{}, "Bearer "+next, "GET", "/subjects"); st != 200 {
		t.Fatalf("the rotated key was not taken: %d %s", st, body)
	}
}

// TestSecurityAuditNamesPrincipal: the audit log records who changed what,
// by the principal each credential kind gives, and from where.
func TestSecurityAuditNamesPrincipal(t *testing.T) {
	w := newWorld(t, "")
	st, err := store.Open(filepath.Join(t.TempDir(), "registry.db"))
	must(t, err)
	defer st.Close()
	srv, err := api.New(api.Config{Store: st, Access: w.guard, MaxCompilations: 1})
	must(t, err)
	hs := httptest.NewUnstartedServer(w.guard.Wrap(srv))
	hs.TLS = w.guard.TLSConfig(w.tlsConfig())
	hs.StartTLS()
	defer hs.Close()
	steps := []struct{ id, method, path, body, principal, action string }{
		{"basic-writer", "POST", "/subjects/pay-value/versions", schemaBody(payV1), "user:basic-writer", store.AuditRegister},
		{"jwt-writer", "POST", "/subjects/pay-value/versions", schemaBody(payV2), "jwt:jwt-writer", store.AuditRegister},
		{"mtls-admin", "PUT", "/config/pay-value", `{"compatibility":"FULL"}`, "cert:mtls-admin", store.AuditConfig},
		{"bearer-admin", "DELETE", "/subjects/pay-value/versions/1", "", "token:bearer-admin", store.AuditDeleteVersion},
	}
	for _, s := range steps {
		if code, body := w.do(t, hs.URL, w.byName[s.id], s.method, s.path, s.body); code != 200 {
			t.Fatalf("%s %s as %s: %d %s", s.method, s.path, s.id, code, body)
		}
	}
	entries, err := st.AuditEntries(context.Background(), store.AuditFilter{})
	must(t, err)
	if len(entries) != len(steps) {
		t.Fatalf("%d audit entries, want %d: %+v", len(entries), len(steps), entries)
	}
	for i, s := range steps {
		e := entries[i]
		if e.Principal != s.principal || e.Action != s.action || e.Subject != "pay-value" || !strings.HasPrefix(e.Remote, "127.0.0.1:") {
			t.Errorf("entry %d: %s %s %s from %s; want %s %s pay-value from 127.0.0.1", e.Seq, e.Principal, e.Action, e.Subject, e.Remote, s.principal, s.action)
		}
	}
	if rep, err := st.VerifyAudit(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("the audit chain does not verify: %+v %v", rep, err)
	}
}

// TestSecurityConsole: the web console answers each principal as the API
// does: pages need reader (a browser without credentials is asked for
// them), lists show only readable subjects, registering needs writer.
func TestSecurityConsole(t *testing.T) {
	w := newWorld(t, "")
	base := w.server(t)
	for _, tc := range []struct {
		id, path string
		status   int
		has, not string
	}{
		{"anonymous", "/ui/", 401, "needs credentials", ""},
		{"basic-reader", "/ui/", 200, "orders-value", ""},
		{"basic-pay-admin", "/ui/", 200, "pay-value", "orders-value"},
		{"jwt-other-admin", "/ui/subject?s=pay-value", 403, "may not read the subject", ""},
		{"mtls-reader", "/ui/subject?s=pay-value", 200, "pay-value", ""},
		{"bearer-reader", "/ui/contract?s=pay-value", 200, "pay-value", ""},
		{"basic-pay-admin", "/ui/subject?s=orders-value", 403, "jwt", ""},
	} {
		t.Run(tc.id+" "+tc.path, func(t *testing.T) {
			st, body, h := w.doHeader(t, base, w.byName[tc.id], "GET", tc.path, "")
			if tc.id == "basic-pay-admin" && tc.status == 403 {
				tc.has = "user:basic-pay-admin"
			}
			if st != tc.status || !strings.Contains(string(body), tc.has) || (tc.not != "" && strings.Contains(string(body), tc.not)) {
				t.Fatalf("answered %d; want %d with %q and without %q:\n%s", st, tc.status, tc.has, tc.not, body)
			}
			if st == 401 && !strings.Contains(strings.Join(h.Values("WWW-Authenticate"), ","), "Basic") {
				t.Errorf("a 401 page without a Basic challenge: the browser would not ask for credentials")
			}
		})
	}
	for _, tc := range []struct {
		id     string
		status int
	}{{"basic-reader", 403}, {"basic-writer", 200}, {"jwt-writer", 200}} {
		t.Run("register as "+tc.id, func(t *testing.T) {
			st, body := w.consolePost(t, base, w.byName[tc.id], "/ui/register", map[string]string{
				"subject": "pay-value", "schema": payV2, "confirm": "yes"})
			if st != tc.status {
				t.Fatalf("answered %d, want %d:\n%s", st, tc.status, body)
			}
		})
	}
}

// tlsConfig is the server's TLS configuration: its certificate, issued
// by the test CA.
func (w *world) tlsConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{w.serverCert}, MinVersion: tls.VersionTLS12}
}

// consolePost submits a console form as id, with the CSRF cookie and
// token a browser would have from the form's page.
func (w *world) consolePost(t *testing.T, base string, id *identity, path string, form map[string]string) (int, string) {
	t.Helper()
	st, page, h := w.doHeader(t, base, id, "GET", "/ui/check?s=pay-value", "")
	if st != 200 {
		t.Fatalf("GET /ui/check as %s: %d", id.name, st)
	}
	cookie := strings.Split(h.Get("Set-Cookie"), ";")[0]
	token := ""
	sc := bufio.NewScanner(bytes.NewReader(page))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, `name="csrf" value="`); i >= 0 {
			token = strings.SplitN(line[i+len(`name="csrf" value="`):], `"`, 2)[0]
			break
		}
	}
	if cookie == "" || token == "" {
		t.Fatalf("no CSRF cookie (%q) or token in the check page", cookie)
	}
	vals := make([]string, 0, len(form)+1)
	for k, v := range form {
		vals = append(vals, k+"="+url.QueryEscape(v))
	}
	vals = append(vals, "csrf="+url.QueryEscape(token))
	req, err := http.NewRequest("POST", base+path, strings.NewReader(strings.Join(vals, "&")))
	must(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Cookie", cookie)
	req.Header.Set("Origin", base)
	switch {
	case id.user != "":
		req.SetBasicAuth(id.user, id.password)
	case id.bearer != "":
		req.Header.Set("Authorization", "Bearer "+id.bearer)
	}
	c := w.client(id.cert)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	must(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	status := resp.StatusCode
	if status == http.StatusSeeOther || status == http.StatusFound {
		status = 200 // registered, and sent on to the new version's page
	}
	return status, fmt.Sprintf("%d %s", resp.StatusCode, b.String())
}

// TestSecurityConfluentPythonClient: Confluent's Python client (the
// confluent-kafka package of the runtime's virtualenv) authenticates with
// Basic, a JWT as its static bearer token and a client certificate, and
// meets refusals as Confluent's registry would refuse it.
func TestSecurityConfluentPythonClient(t *testing.T) {
	python := filepath.Join(repoRoot(t), ".venv", "bin", "python")
	if _, err := os.Stat(python); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the Python runtime's virtualenv is missing under CI (make runtime-python creates it): %v", err)
		}
		t.Skip("no .venv; run make runtime-python")
	}
	w := newWorld(t, "")
	base := w.server(t)
	expired := goodClaims("jwt-writer")
	expired.Expiry = jwt.NewNumericDate(time.Now().Add(-time.Hour))
	caFile := filepath.Join(w.dir, "clients-ca.pem") // the server's CA too
	certs := map[string]map[string]string{}
	for _, who := range []string{"writer", "reader"} {
		cf, kf := writePEM(t, w.dir, "mtls-"+who, *w.byName["mtls-"+who].cert)
		certs[who] = map[string]string{"cert": cf, "key": kf}
	}
	cfg := map[string]any{
		"url": base, "ca": caFile,
		"basic": map[string]any{
			"writer":    map[string]string{"user": "basic-writer", "password": w.byName["basic-writer"].password},
			"reader":    map[string]string{"user": "basic-reader", "password": w.byName["basic-reader"].password},
			"pay-admin": map[string]string{"user": "basic-pay-admin", "password": w.byName["basic-pay-admin"].password},
		},
		"tokens": map[string]string{"writer": w.byName["bearer-writer"].bearer},
		"jwt": map[string]string{"writer": w.byName["jwt-writer"].bearer, "reader": w.byName["jwt-reader"].bearer,
			"expired": w.idp.sign(t, "k1", expired)},
		"certs": certs,
	}
	in, _ := json.Marshal(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "confluent_auth.py"))
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("confluent_auth.py: %v\n%s", err, out)
	}
	cases := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		rest, ok := strings.CutPrefix(line, "case ")
		if !ok {
			t.Logf("%s", line)
			continue
		}
		cases++
		name, verdict := rest, ""
		if i := strings.LastIndex(rest, " ok"); i >= 0 && i == len(rest)-3 {
			name = rest[:i]
		} else if i := strings.Index(rest, " FAILED: "); i >= 0 {
			name, verdict = rest[:i], rest[i+len(" FAILED: "):]
		}
		t.Run(name, func(t *testing.T) {
			if verdict != "" {
				t.Fatal(verdict)
			}
		})
	}
	if cases < 12 {
		t.Fatalf("the client ran %d cases, want 12:\n%s", cases, out)
	}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	must(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}
