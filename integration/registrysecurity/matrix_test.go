//go:build security

// Package registrysecurity runs the registry's access rules as a client
// meets them: every endpoint, by every role, with each kind of
// credential and without any, over HTTPS with client certificates, and
// Confluent's Python client authenticating with Basic, a JWT and a
// certificate. `make test-registry-security` runs it.
package registrysecurity

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/registry/access"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/console"
	"github.com/msgcontract/msgcontract/registry/store"
)

const (
	payV1 = "syntax = \"proto3\";\npackage pay.v1;\nmessage Paid {\n  string order_id = 1;\n}\n"
	payV2 = "syntax = \"proto3\";\npackage pay.v1;\nmessage Paid {\n  string order_id = 1;\n  int64 amount = 2;\n}\n"
	ordV1 = "syntax = \"proto3\";\npackage orders.v1;\nmessage Placed {\n  string order_id = 1;\n}\n"
)

// identity is one caller of the matrix: how it authenticates and what
// the access file grants it.
type identity struct {
	name string
	kind string // anonymous, basic, bearer, jwt, mtls
	// role is what it may do with every subject, or with its scope.
	role access.Role
	// scoped is "pay" for an admin of subjects "pay-" in the default
	// context, "other" for an admin of context ".other" only.
	scoped string
	// credentials
	user, password string
	bearer         string
	cert           *tls.Certificate
}

// world is the access file, PKI and identity provider of a test.
type world struct {
	dir        string
	file       string
	ca         *ca
	serverCert tls.Certificate
	idp        *idp
	ids        []*identity
	byName     map[string]*identity
	guard      *access.Guard
}

func newWorld(t *testing.T, extra string) *world {
	t.Helper()
	w := &world{dir: t.TempDir(), ca: newCA(t, "registry clients"), idp: newIDP(t, "k1", "k2"), byName: map[string]*identity{}}
	w.serverCert = w.ca.issue(t, "registry", true)
	must(t, os.WriteFile(filepath.Join(w.dir, "clients-ca.pem"), w.ca.pem, 0o600))
	must(t, os.WriteFile(filepath.Join(w.dir, "jwks.json"), w.idp.jwks(t, "k1"), 0o600))

	var users, tokens strings.Builder
	add := func(id *identity) {
		w.ids = append(w.ids, id)
		w.byName[id.name] = id
	}
	add(&identity{name: "anonymous", kind: "anonymous"})
	roles := []access.Role{access.Reader, access.Writer, access.Admin}
	for _, kind := range []string{"basic", "bearer", "jwt", "mtls"} {
		for _, r := range roles {
			add(&identity{name: kind + "-" + r.String(), kind: kind, role: r})
		}
	}
	add(&identity{name: "basic-pay-admin", kind: "basic", role: access.Admin, scoped: "pay"})
	add(&identity{name: "jwt-other-admin", kind: "jwt", role: access.Admin, scoped: "other"})

	grants := map[string][]string{} // grant line -> principals
	grantKey := func(id *identity) string {
		switch id.scoped {
		case "pay":
			return "role: admin\n    subjects: [\"pay-\"]\n    contexts: [\".\"]"
		case "other":
			return "role: admin\n    contexts: [\".other\"]"
		}
		return "role: " + id.role.String()
	}
	for _, id := range w.ids {
		switch id.kind {
		case "basic":
			id.user, id.password = id.name, "pw-"+id.name
			hash, err := access.HashSecret(id.password)
			must(t, err)
			fmt.Fprintf(&users, "  - name: %s\n    password_hash: %q\n", id.user, hash)
			grants[grantKey(id)] = append(grants[grantKey(id)], "user:"+id.user)
		case "bearer":
			tok, tid, err := access.NewToken()
			must(t, err)
			hash, err := access.HashSecret(tok)
			must(t, err)
			id.bearer = tok
			fmt.Fprintf(&tokens, "  - name: %s\n    id: %s\n    hash: %q\n", id.name, tid, hash)
			grants[grantKey(id)] = append(grants[grantKey(id)], "token:"+id.name)
		case "jwt":
			// Writers get their role through a group, the others by
			// name: both ways are exercised.
			if id.role == access.Writer && id.scoped == "" {
				id.bearer = w.idp.sign(t, "k1", goodClaims(id.name, "payments-writers"))
				grants[grantKey(id)] = append(grants[grantKey(id)], "group:payments-writers")
			} else {
				id.bearer = w.idp.sign(t, "k1", goodClaims(id.name))
				grants[grantKey(id)] = append(grants[grantKey(id)], "jwt:"+id.name)
			}
		case "mtls":
			c := w.ca.issue(t, id.name, false)
			id.cert = &c
			grants[grantKey(id)] = append(grants[grantKey(id)], "cert:"+id.name)
		}
	}
	var g strings.Builder
	for line, who := range grants {
		fmt.Fprintf(&g, "  - to: [%s]\n    %s\n", strings.Join(who, ", "), line)
	}
	doc := fmt.Sprintf(`# the access file of a test
anonymous: none
users:
%stokens:
%sjwt:
  jwks_file: jwks.json
  issuer: %s
  audience: %s
  groups_claim: groups
mtls:
  client_ca_file: clients-ca.pem
grants:
%s%s`, users.String(), tokens.String(), issuer, audience, g.String(), extra)
	w.file = filepath.Join(w.dir, "access.yaml")
	must(t, os.WriteFile(w.file, []byte(doc), 0o600))
	guard, err := access.New(access.Config{File: w.file})
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	w.guard = guard
	return w
}

// server starts a registry with its web console, as `msgcontract
// registry serve` runs them, over HTTPS with w's guard and a store of its
// own, seeded by admin: subject pay-value (schema id 1), orders-value
// (id 2), a global and a subject config and a subject mode.
func (w *world) server(t *testing.T) string {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "registry.db"))
	must(t, err)
	t.Cleanup(func() { st.Close() })
	srv, err := api.New(api.Config{Store: st, Access: w.guard, MaxCompilations: 1})
	must(t, err)
	con, err := console.New(console.Config{Store: st, API: srv, Access: w.guard})
	must(t, err)
	hs := httptest.NewUnstartedServer(w.guard.Wrap(console.WithAPI(srv, con)))
	hs.TLS = w.guard.TLSConfig(w.tlsConfig())
	hs.StartTLS()
	t.Cleanup(hs.Close)
	admin := w.byName["basic-admin"]
	for _, s := range []struct{ method, path, body string }{
		{"POST", "/subjects/pay-value/versions", schemaBody(payV1)},
		{"POST", "/subjects/orders-value/versions", schemaBody(ordV1)},
		{"PUT", "/config", `{"compatibility":"BACKWARD"}`},
		{"PUT", "/config/pay-value", `{"compatibility":"FULL"}`},
		{"PUT", "/mode/pay-value", `{"mode":"READWRITE"}`},
	} {
		if st, body := w.do(t, hs.URL, admin, s.method, s.path, s.body); st != 200 {
			t.Fatalf("seeding %s %s: %d %s", s.method, s.path, st, body)
		}
	}
	return hs.URL
}

func schemaBody(text string) string {
	b, _ := json.Marshal(map[string]string{"schemaType": "PROTOBUF", "schema": text})
	return string(b)
}

// client is an HTTPS client trusting the test CA, presenting cert.
func (w *world) client(cert *tls.Certificate) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(w.ca.cert)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// do sends one request as id and returns the status and body.
func (w *world) do(t *testing.T, base string, id *identity, method, path, body string) (int, []byte) {
	t.Helper()
	st, b, _ := w.doHeader(t, base, id, method, path, body)
	return st, b
}

func (w *world) doHeader(t *testing.T, base string, id *identity, method, path, body string) (int, []byte, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req, err := http.NewRequest(method, base+path, rd)
	must(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	}
	switch {
	case id.user != "":
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(id.user+":"+id.password)))
	case id.bearer != "":
		req.Header.Set("Authorization", "Bearer "+id.bearer)
	}
	c := w.client(id.cert)
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s as %s: %v", method, path, id.name, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

// endpoint is one route of the REST API, as the matrix calls it, with the
// role the documented rules require (docs/registry-security.md).
type endpoint struct {
	method, path, body string
	need               access.Role // None: open to anyone
	// global: needs the role over every subject of the default context.
	global bool
	// subject: the route is about pay-value (held by the pay admin).
	subject bool
	// console: a web console page, answered in HTML.
	console bool
}

var endpoints = []endpoint{
	{method: "GET", path: "/"},
	{method: "GET", path: "/openapi.json"},
	{method: "GET", path: "/schemas/types"},
	{method: "GET", path: "/subjects", need: access.Reader},
	{method: "GET", path: "/schemas", need: access.Reader},
	{method: "GET", path: "/contexts", need: access.Reader},
	{method: "GET", path: "/config", need: access.Reader},
	{method: "GET", path: "/mode", need: access.Reader},
	{method: "PUT", path: "/config", body: `{"compatibility":"FULL"}`, need: access.Admin, global: true},
	{method: "DELETE", path: "/config", need: access.Admin, global: true},
	{method: "PUT", path: "/mode", body: `{"mode":"READWRITE"}`, need: access.Admin, global: true},
	{method: "GET", path: "/schemas/ids/1", need: access.Reader, subject: true},
	{method: "GET", path: "/schemas/ids/1/schema", need: access.Reader, subject: true},
	{method: "GET", path: "/schemas/ids/1/versions", need: access.Reader, subject: true},
	{method: "GET", path: "/schemas/ids/1/subjects", need: access.Reader, subject: true},
	{method: "GET", path: "/subjects/pay-value/versions", need: access.Reader, subject: true},
	{method: "GET", path: "/subjects/pay-value/versions/1", need: access.Reader, subject: true},
	{method: "GET", path: "/subjects/pay-value/versions/latest/schema", need: access.Reader, subject: true},
	{method: "GET", path: "/subjects/pay-value/versions/1/referencedby", need: access.Reader, subject: true},
	{method: "POST", path: "/subjects/pay-value", body: schemaBody(payV1), need: access.Reader, subject: true},
	{method: "POST", path: "/compatibility/subjects/pay-value/versions/1", body: schemaBody(payV2), need: access.Reader, subject: true},
	{method: "POST", path: "/compatibility/subjects/pay-value/versions", body: schemaBody(payV2), need: access.Reader, subject: true},
	{method: "GET", path: "/config/pay-value", need: access.Reader, subject: true},
	{method: "GET", path: "/mode/pay-value", need: access.Reader, subject: true},
	{method: "POST", path: "/subjects/pay-value/versions", body: schemaBody(payV2), need: access.Writer, subject: true},
	{method: "DELETE", path: "/subjects/pay-value", need: access.Admin, subject: true},
	{method: "DELETE", path: "/subjects/pay-value/versions/1", need: access.Admin, subject: true},
	{method: "PUT", path: "/config/pay-value", body: `{"compatibility":"NONE"}`, need: access.Admin, subject: true},
	{method: "DELETE", path: "/config/pay-value", need: access.Admin, subject: true},
	{method: "PUT", path: "/mode/pay-value", body: `{"mode":"READONLY"}`, need: access.Admin, subject: true},
	{method: "DELETE", path: "/mode/pay-value", need: access.Admin, subject: true},
	// The web console's pages (HTML; their forms in TestSecurityConsole).
	{method: "GET", path: "/ui/", need: access.Reader, console: true},
	{method: "GET", path: "/ui/subject?s=pay-value", need: access.Reader, subject: true, console: true},
	{method: "GET", path: "/ui/version?s=pay-value&v=1", need: access.Reader, subject: true, console: true},
	{method: "GET", path: "/ui/contract?s=pay-value", need: access.Reader, subject: true, console: true},
	{method: "GET", path: "/ui/check?s=pay-value", need: access.Reader, subject: true, console: true},
}

// allowed is the matrix's oracle: what the documented rules let id do.
func allowed(id *identity, e endpoint) bool {
	switch {
	case e.need == access.None:
		return true
	case id.kind == "anonymous":
		return false
	case id.scoped == "pay":
		// Admin of pay-* in the default context: its subject's routes
		// and the listings, never the global settings.
		return !e.global
	case id.scoped == "other":
		// Admin of another context: listings only.
		return !e.global && !e.subject
	}
	return id.role >= e.need
}

// TestSecurityMatrix: every endpoint, by every identity, on a registry
// of its own; allowed requests succeed (2xx), refused ones are 401 with
// a challenge when anonymous and 403 otherwise, with Confluent's codes.
func TestSecurityMatrix(t *testing.T) {
	w := newWorld(t, "")
	for _, e := range endpoints {
		for _, id := range w.ids {
			t.Run(fmt.Sprintf("%s %s/%s", e.method, e.path, id.name), func(t *testing.T) {
				base := w.server(t)
				st, body, h := w.doHeader(t, base, id, e.method, e.path, e.body)
				switch {
				case allowed(id, e):
					if st < 200 || st > 299 {
						t.Fatalf("allowed, but answered %d: %s", st, body)
					}
				case e.console:
					want := 403
					if id.kind == "anonymous" {
						want = 401
					}
					if st != want || !strings.Contains(string(body), id.kindPrefix()) && want == 403 {
						t.Fatalf("answered %d, want %d naming %s:\n%s", st, want, id.kindPrefix(), body)
					}
				case id.kind == "anonymous":
					expectDenied(t, st, body, 401, access.CodeUnauthorized)
					if len(h.Values("WWW-Authenticate")) != 2 {
						t.Errorf("401 without the Bearer and Basic challenges: %q", h.Values("WWW-Authenticate"))
					}
				default:
					expectDenied(t, st, body, 403, access.CodeForbidden)
					if !strings.Contains(string(body), id.kindPrefix()) {
						t.Errorf("the 403 does not name the principal %s: %s", id.kindPrefix(), body)
					}
				}
			})
		}
	}
}

func (id *identity) kindPrefix() string {
	switch id.kind {
	case "basic":
		return "user:" + id.name
	case "bearer":
		return "token:" + id.name
	case "jwt":
		return "jwt:" + id.name
	case "mtls":
		return "cert:" + id.name
	}
	return id.name
}

func expectDenied(t *testing.T, st int, body []byte, status, code int) {
	t.Helper()
	var e struct {
		Code int    `json:"error_code"`
		Msg  string `json:"message"`
	}
	if st != status || json.Unmarshal(body, &e) != nil || e.Code != code || e.Msg == "" {
		t.Fatalf("answered %d %s; want %d with error_code %d and a message", st, body, status, code)
	}
}

// TestSecurityListingsFiltered: listings show only what the caller may
// read; a schema id only its subjects' readers may fetch.
func TestSecurityListingsFiltered(t *testing.T) {
	w := newWorld(t, "")
	base := w.server(t)
	for _, tc := range []struct {
		id, path, want string
		status         int
	}{
		{"basic-reader", "/subjects", `["orders-value","pay-value"]`, 200},
		{"basic-pay-admin", "/subjects", `["pay-value"]`, 200},
		{"jwt-other-admin", "/subjects", `[]`, 200},
		{"basic-pay-admin", "/schemas/ids/1/subjects", `["pay-value"]`, 200},
		{"basic-pay-admin", "/schemas/ids/2", "", 403},
		{"basic-pay-admin", "/subjects/orders-value/versions", "", 403},
		{"jwt-other-admin", "/contexts", `[]`, 200},
		{"mtls-reader", "/contexts", `["."]`, 200},
	} {
		t.Run(tc.id+" "+tc.path, func(t *testing.T) {
			st, body := w.do(t, base, w.byName[tc.id], "GET", tc.path, "")
			if st != tc.status || (tc.want != "" && strings.TrimSpace(string(body)) != tc.want) {
				t.Fatalf("answered %d %s; want %d %s", st, body, tc.status, tc.want)
			}
		})
	}
	// /schemas lists only pay-value's version to the pay admin.
	st, body := w.do(t, base, w.byName["basic-pay-admin"], "GET", "/schemas", "")
	if st != 200 || strings.Contains(string(body), "orders-value") || !strings.Contains(string(body), "pay-value") {
		t.Fatalf("GET /schemas as the pay admin: %d %s", st, body)
	}
}
