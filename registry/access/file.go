package access

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// File is the access file as written: who exists, how they prove it, and
// what each may do. See docs/registry-security.md for an annotated
// example.
type File struct {
	// Anonymous is the role of requests without credentials: "none"
	// (the default: every request must authenticate) or "reader".
	Anonymous string `yaml:"anonymous"`
	// Users authenticate with HTTP Basic (what Confluent's clients send
	// for basic.auth.user.info). Principal "user:<name>".
	Users []User `yaml:"users"`
	// Tokens authenticate as "Authorization: Bearer <token>", or as the
	// password of HTTP Basic with any user name. Principal
	// "token:<name>".
	Tokens []Token `yaml:"tokens"`
	// JWT, when set, accepts OIDC tokens as bearer tokens. Principal
	// "jwt:<claim>", groups "group:<name>".
	JWT *JWTConfig `yaml:"jwt"`
	// MTLS, when set, accepts client certificates issued by its CA.
	// Principal "cert:<common name>".
	MTLS *MTLSConfig `yaml:"mtls"`
	// Grants give principals and groups roles.
	Grants []Grant `yaml:"grants"`
	// RateLimit limits each principal's requests.
	RateLimit *RateLimit `yaml:"rate_limit"`
}

// User is an HTTP Basic user.
type User struct {
	Name string `yaml:"name"`
	// PasswordHash is the password's argon2id ("$argon2id$…") or bcrypt
	// ("$2a$…", "$2b$…") hash, as `msgcontract-ops registry credential
	// password` prints it. Never the password itself.
	PasswordHash string `yaml:"password_hash"`
}

// Token is a bearer token.
type Token struct {
	Name string `yaml:"name"`
	// ID is the token's public part, the characters after "mct_" up to
	// the next "_", by which a presented token finds its entry.
	ID string `yaml:"id"`
	// Hash is the whole token's argon2id or bcrypt hash.
	Hash string `yaml:"hash"`
}

// JWTConfig verifies OIDC tokens offline.
type JWTConfig struct {
	// JWKSFile is a JSON Web Key Set (the identity provider's
	// jwks_uri document, saved); keys are picked by the token's "kid",
	// so rotating keys is adding the new one to the file.
	JWKSFile string `yaml:"jwks_file"`
	// Issuer must equal the token's "iss".
	Issuer string `yaml:"issuer"`
	// Audience must be one of the token's "aud".
	Audience string `yaml:"audience"`
	// PrincipalClaim names the claim that identifies the caller.
	// Default "sub".
	PrincipalClaim string `yaml:"principal_claim"`
	// GroupsClaim, when set, names a claim holding a list of groups.
	GroupsClaim string `yaml:"groups_claim"`
	// Leeway tolerates clock skew on exp and nbf. Default 30s.
	Leeway time.Duration `yaml:"leeway"`
}

// MTLSConfig accepts client certificates.
type MTLSConfig struct {
	// ClientCAFile holds the PEM certificates of the CAs that issue
	// client certificates.
	ClientCAFile string `yaml:"client_ca_file"`
}

// Grant gives a role to principals over subjects.
type Grant struct {
	// To lists principal IDs ("user:alice", "token:ci", "jwt:svc",
	// "cert:payments", "group:payments", "anonymous").
	To []string `yaml:"to"`
	// Role is reader, writer or admin.
	Role string `yaml:"role"`
	// Subjects are subject-name prefixes the grant covers; none: all.
	Subjects []string `yaml:"subjects"`
	// Contexts are the schema contexts the grant covers ("." is the
	// default context, ".payments" another); none: all.
	Contexts []string `yaml:"contexts"`
}

// RateLimit is a token bucket per principal (per client address for
// anonymous requests).
type RateLimit struct {
	// RPS is the sustained rate, in requests per second.
	RPS float64 `yaml:"rps"`
	// Burst is how many requests may come at once. Default RPS, at
	// least 1.
	Burst int `yaml:"burst"`
	// Principals overrides the limit for some principals.
	Principals map[string]Limit `yaml:"principals"`
}

// Limit is one token bucket's rate and burst.
type Limit struct {
	RPS   float64 `yaml:"rps"`
	Burst int     `yaml:"burst"`
}

// ParseFile reads an access file's text; name is used in errors, which
// carry the line and column of what is wrong.
func ParseFile(name string, data []byte) (*File, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) { // an empty file: no users, no grants
			return &f, nil
		}
		var te *yaml.TypeError
		if errors.As(err, &te) {
			errs := make([]error, len(te.Errors))
			for i, e := range te.Errors {
				// "line 2: field grant not found in type access.File"
				line, msg, _ := strings.Cut(strings.TrimPrefix(e, "line "), ": ")
				if field, typ, ok := strings.Cut(msg, " not found in type access."); ok {
					where := "an entry of " + strings.ToLower(typ)
					if typ == "File" {
						where = "the access file"
					}
					msg = strings.TrimPrefix(field, "field ") + " is not a setting of " + where
				}
				errs[i] = fmt.Errorf("%s:%s: %s; see docs/registry-security.md for the settings", name, line, msg)
			}
			return nil, errors.Join(errs...)
		}
		return nil, fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root)
	if err := f.validate(name, &root); err != nil {
		return nil, err
	}
	return &f, nil
}

// validate checks the file's meaning; errors point at the offending
// line when root can find it.
func (f *File) validate(name string, root *yaml.Node) error {
	var errs []error
	at := func(path ...any) string {
		if n := find(root, path...); n != nil {
			return fmt.Sprintf("%s:%d:%d", name, n.Line, n.Column)
		}
		return name
	}
	if _, err := ParseRole(f.Anonymous); err != nil || f.Anonymous == "writer" || f.Anonymous == "admin" {
		errs = append(errs, fmt.Errorf("%s: anonymous: %q: use none or reader (anonymous writers would make every other rule moot)", at("anonymous"), f.Anonymous))
	}
	seen := map[string]string{}
	dup := func(id, where string) {
		if prev, ok := seen[id]; ok {
			errs = append(errs, fmt.Errorf("%s: %s is defined twice (first at %s)", where, id, prev))
		}
		seen[id] = where
	}
	for i, u := range f.Users {
		w := at("users", i)
		if u.Name == "" || strings.ContainsAny(u.Name, ": \t") {
			errs = append(errs, fmt.Errorf("%s: user name %q: give a name without colons or spaces", w, u.Name))
		}
		if !hashLike(u.PasswordHash) {
			errs = append(errs, fmt.Errorf("%s: user %s: password_hash must be an argon2id or bcrypt hash; make one with `msgcontract-ops registry credential password --name %s`", w, u.Name, u.Name))
		}
		dup("user:"+u.Name, w)
	}
	ids := map[string]bool{}
	for i, t := range f.Tokens {
		w := at("tokens", i)
		if t.Name == "" || t.ID == "" || !hashLike(t.Hash) {
			errs = append(errs, fmt.Errorf("%s: token %q needs name, id and hash; make one with `msgcontract-ops registry credential token --name NAME`", w, t.Name))
		}
		if ids[t.ID] {
			errs = append(errs, fmt.Errorf("%s: token id %q is used twice", w, t.ID))
		}
		ids[t.ID] = true
		dup("token:"+t.Name, w)
	}
	if j := f.JWT; j != nil {
		if j.JWKSFile == "" || j.Issuer == "" || j.Audience == "" {
			errs = append(errs, fmt.Errorf("%s: jwt needs jwks_file, issuer and audience", at("jwt")))
		}
	}
	if m := f.MTLS; m != nil && m.ClientCAFile == "" {
		errs = append(errs, fmt.Errorf("%s: mtls needs client_ca_file", at("mtls")))
	}
	for i, g := range f.Grants {
		w := at("grants", i)
		r, err := ParseRole(g.Role)
		if err != nil || r == None {
			errs = append(errs, fmt.Errorf("%s: grant role %q: use reader, writer or admin", w, g.Role))
		}
		if len(g.To) == 0 {
			errs = append(errs, fmt.Errorf("%s: grant names no principal; list them under to", w))
		}
		for _, p := range g.To {
			kind, rest, ok := strings.Cut(p, ":")
			switch {
			case p == Anonymous:
			case !ok || rest == "":
				errs = append(errs, fmt.Errorf("%s: principal %q: write KIND:NAME with KIND user, token, jwt, cert or group, or anonymous", w, p))
			case kind != "user" && kind != "token" && kind != "jwt" && kind != "cert" && kind != "group":
				errs = append(errs, fmt.Errorf("%s: principal %q: unknown kind %q; use user, token, jwt, cert or group", w, p, kind))
			}
		}
		for _, c := range g.Contexts {
			if !strings.HasPrefix(c, ".") {
				errs = append(errs, fmt.Errorf("%s: context %q: contexts start with a dot (\".\" is the default one)", w, c))
			}
		}
	}
	if rl := f.RateLimit; rl != nil {
		if rl.RPS <= 0 {
			errs = append(errs, fmt.Errorf("%s: rate_limit.rps must be positive", at("rate_limit")))
		}
		for p, l := range rl.Principals {
			if l.RPS <= 0 {
				errs = append(errs, fmt.Errorf("%s: rate_limit for %s: rps must be positive", at("rate_limit", "principals"), p))
			}
		}
	}
	return errors.Join(errs...)
}

// find walks root (a document node) by map keys and sequence indexes.
func find(root *yaml.Node, path ...any) *yaml.Node {
	n := root
	if n == nil || len(n.Content) == 0 {
		return nil
	}
	n = n.Content[0]
	for depth, p := range path {
		switch k := p.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return nil
			}
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
					if next.Kind == yaml.ScalarNode || depth == len(path)-1 {
						next = n.Content[i] // the key's position
					}
				}
			}
			if next == nil {
				return nil
			}
			n = next
		case int:
			if n.Kind != yaml.SequenceNode || k >= len(n.Content) {
				return nil
			}
			n = n.Content[k]
		}
	}
	return n
}

// policy is a File made ready to answer requests.
type policy struct {
	anonymous Role
	users     map[string]string // name -> hash
	tokens    map[string]Token  // id -> token
	jwt       *jwtVerifier
	clientCAs *x509.CertPool
	grants    map[string][]grant // principal or group ID -> grants
	rate      *RateLimit
	// legacyToken is Config.Token, when the guard runs on it.
	legacyToken string
	// files are the files the policy was read from, with what they held,
	// so a reload happens only when one changed.
	files map[string]fileStamp
}

// compile turns f, read from the file at path, into a policy, reading the
// JWKS and CA files it names (relative to the access file's directory)
// and adding their stamps to files, which holds the access file's.
func compile(path string, f *File, files map[string]fileStamp) (*policy, error) {
	p := &policy{users: map[string]string{}, tokens: map[string]Token{}, grants: map[string][]grant{}, rate: f.RateLimit, files: files}
	p.anonymous, _ = ParseRole(f.Anonymous)
	for _, u := range f.Users {
		p.users[u.Name] = u.PasswordHash
	}
	for _, t := range f.Tokens {
		p.tokens[t.ID] = t
	}
	rel := func(name string) string {
		if filepath.IsAbs(name) || path == "" {
			return name
		}
		return filepath.Join(filepath.Dir(path), name)
	}
	if f.JWT != nil {
		file := rel(f.JWT.JWKSFile)
		data, err := readStamped(p.files, file)
		if err != nil {
			return nil, fmt.Errorf("jwt.jwks_file: %w", err)
		}
		v, err := newJWTVerifier(file, data, *f.JWT)
		if err != nil {
			return nil, err
		}
		p.jwt = v
	}
	if f.MTLS != nil {
		file := rel(f.MTLS.ClientCAFile)
		data, err := readStamped(p.files, file)
		if err != nil {
			return nil, fmt.Errorf("mtls.client_ca_file: %w", err)
		}
		p.clientCAs = x509.NewCertPool()
		if !p.clientCAs.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("mtls.client_ca_file %s holds no PEM certificate", file)
		}
	}
	for _, g := range f.Grants {
		r, _ := ParseRole(g.Role)
		cg := grant{role: r, prefixes: g.Subjects, contexts: g.Contexts}
		for _, who := range g.To {
			p.grants[who] = append(p.grants[who], cg)
		}
	}
	if p.anonymous > None {
		p.grants[Anonymous] = append(p.grants[Anonymous], grant{role: p.anonymous})
	}
	return p, nil
}

// principal builds the principal id with its groups' grants.
func (p *policy) principal(id string, m Method, groups []string) *Principal {
	pr := &Principal{ID: id, Method: m, Groups: groups}
	pr.grants = append(pr.grants, p.grants[id]...)
	for _, g := range groups {
		pr.grants = append(pr.grants, p.grants[g]...)
	}
	if id != Anonymous && p.anonymous > None {
		// What anyone may do, an authenticated principal may do too.
		pr.grants = append(pr.grants, grant{role: p.anonymous})
	}
	return pr
}

// fileStamp identifies a file's content cheaply.
type fileStamp struct {
	size    int64
	modTime time.Time
}

func stamp(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{size: fi.Size(), modTime: fi.ModTime()}, nil
}

func readStamped(files map[string]fileStamp, path string) ([]byte, error) {
	st, err := stamp(path)
	if err != nil {
		return nil, err
	}
	files[path] = st
	return os.ReadFile(path)
}
