package access

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/crypto/bcrypt"
)

// TestParseFileErrors: each mistake in an access file is named with the
// file, line and column, and what to do.
func TestParseFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"unknown field", "anonymous: none\ngrant:\n  - to: [user:a]\n", "access.yaml:2: grant is not a setting of the access file"},
		{"anonymous writer", "anonymous: writer\n", "access.yaml:1:1: anonymous"},
		{"plain password", "users:\n  - name: alice\n    password_hash: hunter2\n", "access.yaml:2:5: user alice: password_hash must be an argon2id or bcrypt hash"},
		{"unknown role", "grants:\n  - to: [user:a]\n    role: owner\n", `access.yaml:2:5: grant role "owner"`},
		{"principal without kind", "grants:\n  - to: [alice]\n    role: reader\n", `principal "alice": write KIND:NAME`},
		{"unknown kind", "grants:\n  - to: [team:x]\n    role: reader\n", `unknown kind "team"`},
		{"context without dot", "grants:\n  - to: [user:a]\n    role: reader\n    contexts: [payments]\n", `context "payments": contexts start with a dot`},
		{"jwt incomplete", "jwt:\n  jwks_file: k.json\n", "access.yaml:1:1: jwt needs jwks_file, issuer and audience"},
		{"duplicate user", "users:\n  - name: a\n    password_hash: $2a$10$x\n  - name: a\n    password_hash: $2a$10$x\n", "user:a is defined twice (first at access.yaml:2:5)"},
		{"rate without rps", "rate_limit:\n  burst: 3\n", "rate_limit.rps must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile("access.yaml", []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want it to contain %q", err, tc.want)
			}
		})
	}
	if f, err := ParseFile("access.yaml", nil); err != nil || len(f.Grants) != 0 {
		t.Fatalf("an empty file: %v", err)
	}
}

// TestVerifySecret: argon2id hashes HashSecret makes, and bcrypt hashes
// other tools make, verify the right secret only.
func TestVerifySecret(t *testing.T) {
	a, err := HashSecret("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	b, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{a, string(b)} {
		for secret, want := range map[string]bool{"s3cret": true, "s3cre": false, "": false, "s3cret ": false} {
			got, err := VerifySecret(h, secret)
			if err != nil || got != want {
				t.Errorf("VerifySecret(%.12s…, %q) = %v, %v; want %v", h, secret, got, err, want)
			}
		}
	}
	if _, err := VerifySecret("$argon2id$v=19$m=x$y$z", "s"); err == nil {
		t.Error("a malformed argon2id hash verified without error")
	}
}

// TestGrants: roles include the ones below; prefixes and contexts
// narrow a grant; a context-wide subject needs a grant without prefixes.
func TestGrants(t *testing.T) {
	p := &Principal{grants: []grant{
		{role: Writer, prefixes: []string{"pay-"}, contexts: []string{"."}},
		{role: Admin, contexts: []string{".orders"}},
	}}
	for _, tc := range []struct {
		role    Role
		subject string
		want    bool
	}{
		{Reader, "pay-value", true},
		{Writer, "pay-value", true},
		{Admin, "pay-value", false},
		{Reader, "orders-value", false},
		{Reader, ":.:pay-value", true},
		{Reader, ":.other:pay-value", false},
		{Admin, ":.orders:anything", true},
		{Admin, ":.orders:", true},
		{Writer, ":.:", false},
	} {
		if got := p.Can(tc.role, tc.subject); got != tc.want {
			t.Errorf("Can(%s, %q) = %v, want %v", tc.role, tc.subject, got, tc.want)
		}
	}
	if p.CanGlobal(Reader) || p.CanAll(Reader) || !p.CanAny(Admin) || !p.CanContext(Admin, ".orders") || p.CanContext(Admin, ".") {
		t.Error("CanGlobal/CanAll/CanAny/CanContext disagree with the grants")
	}
}

// TestJWTRememberedUntilExpiry: a verified JWT is not verified again on
// every request, but is refused once it expires (exp plus leeway).
func TestJWTRememberedUntilExpiry(t *testing.T) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	set, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Algorithm: "ES256"}}})
	if err := os.WriteFile(filepath.Join(dir, "jwks.json"), set, 0o600); err != nil {
		t.Fatal(err)
	}
	doc := "jwt:\n  jwks_file: jwks.json\n  issuer: i\n  audience: a\n  leeway: 10s\ngrants:\n  - to: [jwt:s]\n    role: reader\n"
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := New(Config{File: filepath.Join(dir, "a.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	clock := func() time.Time { return now }
	g.now, g.cur.Load().jwt.now = clock, clock
	s, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	tok, _ := jwt.Signed(s).Claims(jwt.Claims{Issuer: "i", Audience: jwt.Audience{"a"}, Subject: "s", Expiry: jwt.NewNumericDate(now.Add(time.Minute))}).Serialize()
	r, _ := http.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	r.RemoteAddr = "127.0.0.1:1"
	for _, tc := range []struct {
		after time.Duration
		ok    bool
	}{{0, true}, {time.Minute, true}, {time.Minute + 9*time.Second, true}, {time.Minute + 11*time.Second, false}} {
		now = time.Now().Add(tc.after)
		r2, d := g.Admit(r)
		if (d == nil) != tc.ok {
			t.Fatalf("%v after issue: denial %v, want ok=%v", tc.after, d, tc.ok)
		}
		if d == nil && FromContext(r2.Context()).ID != "jwt:s" {
			t.Fatalf("principal %q", FromContext(r2.Context()).ID)
		}
	}
}
