package access

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// Confluent's error codes for refused requests.
const (
	CodeUnauthorized    = 40101
	CodeForbidden       = 40301
	CodeTooManyRequests = 42901
)

// Config configures a Guard. Set File, or Token, or neither (then every
// request may do everything, which only a registry on a loopback address
// should allow).
type Config struct {
	// File is the access file (YAML; see File).
	File string
	// Token is the older single-token setting: requests carrying it (as a
	// bearer token, or as HTTP Basic's password with any user name) are
	// principal "token:registry" with the admin role; everyone may read.
	// Ignored when File is set.
	Token string
	// ReloadInterval is how often Run looks for changes to the access
	// file and the files it names. Default 2s.
	ReloadInterval time.Duration
	// Logf reports reloads and failed reloads. Default: discard.
	Logf func(format string, args ...any)
}

// Validate reports a configuration that cannot work.
func (c *Config) Validate() error {
	if c.ReloadInterval < 0 {
		return errors.New("access: ReloadInterval must not be negative")
	}
	return nil
}

// Guard authenticates requests, limits their rate and tells what each
// principal may do. It is safe for concurrent use.
type Guard struct {
	cfg Config
	cur atomic.Pointer[policy]
	// reloads counts policies loaded, for tests and the log.
	reloads atomic.Int64

	mu       sync.Mutex
	verified map[[32]byte]verifiedCred // credentials that verified, under the current policy
	limits   map[string]*rate.Limiter
	now      func() time.Time
}

type verifiedCred struct {
	id     string
	method Method
	groups []string
	// until, when set, is when the credential stops being valid (a
	// JWT's exp plus leeway).
	until time.Time
}

// maxCached bounds the verified-credential cache and the rate limiters;
// past it they start afresh (a verification costs tens of milliseconds,
// a fresh bucket allows one burst).
const maxCached = 50_000

// New returns a Guard for cfg, with the access file loaded: an error
// names the file, line and column of what is wrong.
func New(cfg Config) (*Guard, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ReloadInterval == 0 {
		cfg.ReloadInterval = 2 * time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	g := &Guard{cfg: cfg, verified: map[[32]byte]verifiedCred{}, limits: map[string]*rate.Limiter{}, now: time.Now}
	p, err := g.load()
	if err != nil {
		return nil, err
	}
	g.install(p)
	return g, nil
}

// GuardOr returns g, or, when g is nil, a guard for the older single
// token (no token: everyone may do everything): what the API and the
// console use when they are given a token and no guard.
func GuardOr(g *Guard, token string) (*Guard, error) {
	if g != nil {
		return g, nil
	}
	return New(Config{Token: token})
}

func (g *Guard) load() (*policy, error) {
	switch {
	case g.cfg.File != "":
		files := map[string]fileStamp{}
		data, err := readStamped(files, g.cfg.File)
		if err != nil {
			return nil, fmt.Errorf("access file: %w", err)
		}
		f, err := ParseFile(g.cfg.File, data)
		if err != nil {
			return nil, err
		}
		np, err := compile(g.cfg.File, f, files)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.cfg.File, err)
		}
		return np, nil
	case g.cfg.Token != "":
		return &policy{anonymous: Reader, legacyToken: g.cfg.Token, grants: map[string][]grant{
			Anonymous:                  {{role: Reader}},
			"token:" + legacyTokenName: {{role: Admin}},
		}}, nil
	}
	return &policy{anonymous: Admin, grants: map[string][]grant{Anonymous: {{role: Admin}}}}, nil
}

// legacyTokenName names the principal of the older single token.
const legacyTokenName = "registry"

func (g *Guard) install(p *policy) {
	g.mu.Lock()
	g.verified = map[[32]byte]verifiedCred{}
	g.limits = map[string]*rate.Limiter{}
	g.mu.Unlock()
	g.cur.Store(p)
	g.reloads.Add(1)
}

// Reload reads the access file again if it or a file it names changed
// since it was loaded. A file that does not load leaves the rules in
// force unchanged and is reported; nothing is half-applied.
func (g *Guard) Reload() (changed bool, err error) {
	p := g.cur.Load()
	if len(p.files) == 0 {
		return false, nil
	}
	same := true
	for path, st := range p.files {
		now, err := stamp(path)
		if err != nil || now != st {
			same = false
			break
		}
	}
	if same {
		return false, nil
	}
	np, err := g.load()
	if err != nil {
		g.cfg.Logf("access: keeping the rules in force; the changed access file does not load: %v", err)
		return false, err
	}
	g.install(np)
	g.cfg.Logf("access: reloaded %s", g.cfg.File)
	return true, nil
}

// Reloads is how many times rules were loaded (1 after New).
func (g *Guard) Reloads() int64 { return g.reloads.Load() }

// Run reloads the access file whenever it changes, until ctx ends.
func (g *Guard) Run(ctx context.Context) {
	if g.cfg.File == "" {
		return
	}
	t := time.NewTicker(g.cfg.ReloadInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = g.Reload()
		}
	}
}

// TLSConfig returns base (which holds the server's certificate) set to
// ask for client certificates and verify them against the access file's
// client CAs as they are at each handshake, so a reload takes effect for
// new connections. Without mtls in the access file, no certificate is
// asked for.
func (g *Guard) TLSConfig(base *tls.Config) *tls.Config {
	out := base.Clone()
	out.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		c := base.Clone()
		if p := g.cur.Load(); p.clientCAs != nil {
			c.ClientCAs = p.clientCAs
			c.ClientAuth = tls.VerifyClientCertIfGiven
		}
		return c, nil
	}
	return out
}

// Denial is why a request was refused, in Confluent's error shape.
type Denial struct {
	Status     int    `json:"-"`
	Code       int    `json:"error_code"`
	Message    string `json:"message"`
	RetryAfter int    `json:"-"`
}

func (d *Denial) Error() string { return d.Message }

// Write sends d as the response, with the challenge a 401 needs and the
// Retry-After a 429 needs.
func (d *Denial) Write(w http.ResponseWriter) {
	h := w.Header()
	if d.Status == http.StatusUnauthorized {
		Challenge(h)
	}
	if d.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(d.RetryAfter))
	}
	b, _ := json.Marshal(d)
	h.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(d.Status)
	_, _ = w.Write(b)
}

// Challenge adds the WWW-Authenticate challenges of the schemes the
// registry takes.
func Challenge(h http.Header) {
	h.Add("WWW-Authenticate", `Bearer realm="msgcontract-registry"`)
	h.Add("WWW-Authenticate", `Basic realm="msgcontract-registry", charset="UTF-8"`)
}

// Unauthenticated is the denial of a request whose principal may not do
// what it asks and that carried no credentials: it should authenticate.
func Unauthenticated(what string) *Denial {
	return &Denial{Status: http.StatusUnauthorized, Code: CodeUnauthorized,
		Message: what + " needs credentials: " + howToAuthenticate}
}

// Forbidden is the denial of a request whose authenticated principal
// lacks the role.
func Forbidden(p *Principal, role Role, what string) *Denial {
	return &Denial{Status: http.StatusForbidden, Code: CodeForbidden,
		Message: fmt.Sprintf("%s may not %s: that needs the %s role, which no grant of the access file gives it; ask a registry admin", p.ID, what, role)}
}

// Deny returns the denial for p lacking role for what: 401 for an
// anonymous request, 403 for an authenticated one.
func Deny(p *Principal, role Role, what string) *Denial {
	if p == nil || p.ID == Anonymous {
		return Unauthenticated(what)
	}
	return Forbidden(p, role, what)
}

// Admit authenticates r and applies the principal's rate limit. It
// returns r with the principal in its context, or a denial. A request
// already admitted (the console calling the API in-process) passes as it
// is.
func (g *Guard) Admit(r *http.Request) (*http.Request, *Denial) {
	if FromContext(r.Context()) != nil {
		return r, nil
	}
	p := g.cur.Load()
	remote := remoteHost(r)
	pr, d := g.authenticate(p, r, remote)
	if d != nil {
		return nil, d
	}
	key := pr.ID
	if pr.ID == Anonymous {
		key = Anonymous + "@" + remote
	}
	if d := g.limit(p, key, pr.ID); d != nil {
		return nil, d
	}
	return r.WithContext(WithPrincipal(r.Context(), pr)), nil
}

// Wrap admits every request before h serves it.
func (g *Guard) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2, d := g.Admit(r)
		if d != nil {
			d.Write(w)
			return
		}
		h.ServeHTTP(w, r2)
	})
}

// Bearer authenticates a token or JWT typed into a form (the console's
// token field), as if it came as "Authorization: Bearer"; remote is the
// client's address, whose failed attempts are counted.
func (g *Guard) Bearer(cred, remote string) (*Principal, *Denial) {
	r := &http.Request{Header: http.Header{"Authorization": {"Bearer " + strings.TrimSpace(cred)}}, RemoteAddr: remote}
	return g.authenticate(g.cur.Load(), r, remoteHost(r))
}

func (g *Guard) authenticate(p *policy, r *http.Request, remote string) (*Principal, *Denial) {
	authz := strings.TrimSpace(r.Header.Get("Authorization"))
	if authz == "" {
		if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && p.clientCAs != nil {
			cn := r.TLS.VerifiedChains[0][0].Subject.CommonName
			if cn == "" {
				return nil, badCredentials("the client certificate has no common name to name the caller")
			}
			return p.principal("cert:"+cn, MethodMTLS, nil), nil
		}
		return p.principal(Anonymous, MethodAnonymous, nil), nil
	}
	scheme, cred, _ := strings.Cut(authz, " ")
	cred = strings.TrimSpace(cred)
	switch {
	case strings.EqualFold(scheme, "Basic"):
		user, pass, ok := r.BasicAuth()
		if !ok {
			return nil, badCredentials("the Basic credentials are not base64 of USER:PASSWORD")
		}
		if hash, ok := p.users[user]; ok {
			return g.verifyCached(p, remote, MethodBasic, "user:"+user, user+"\x00"+pass, func() bool {
				okv, _ := VerifySecret(hash, pass)
				return okv
			})
		}
		// Any user name with a token as the password: what Confluent
		// clients send when given a token as basic.auth.user.info.
		return g.verifyToken(p, remote, pass, MethodBasic)
	case strings.EqualFold(scheme, "Bearer"):
		if p.jwt != nil && looksLikeJWT(cred) {
			return g.verifyJWT(p, remote, cred)
		}
		return g.verifyToken(p, remote, cred, MethodBearer)
	}
	return nil, badCredentials(fmt.Sprintf("the Authorization scheme %q is not one the registry takes (Basic or Bearer)", scheme))
}

// verifyJWT checks a JWT's signature and claims once, then remembers it
// until it expires: Confluent's clients send the same token with every
// request, and a signature check costs more than serving most reads.
func (g *Guard) verifyJWT(p *policy, remote, cred string) (*Principal, *Denial) {
	key := sha256.Sum256([]byte("jwt\x00" + cred))
	now := g.now()
	g.mu.Lock()
	v, ok := g.verified[key]
	g.mu.Unlock()
	if ok && now.Before(v.until) {
		return p.principal(v.id, MethodJWT, v.groups), nil
	}
	id, groups, until, err := p.jwt.verify(cred)
	if err != nil {
		g.failed(p, remote)
		return nil, badCredentials("the bearer JWT was refused: " + err.Error())
	}
	g.remember(key, verifiedCred{id: id, method: MethodJWT, groups: groups, until: until})
	return p.principal(id, MethodJWT, groups), nil
}

func (g *Guard) remember(key [32]byte, v verifiedCred) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.verified) >= maxCached {
		g.verified = map[[32]byte]verifiedCred{}
	}
	g.verified[key] = v
}

func (g *Guard) verifyToken(p *policy, remote, token string, m Method) (*Principal, *Denial) {
	if p.legacyToken != "" {
		if subtle.ConstantTimeCompare([]byte(token), []byte(p.legacyToken)) == 1 {
			return p.principal("token:"+legacyTokenName, m, nil), nil
		}
		g.failed(p, remote)
		return nil, badCredentials("the token is not the registry's (the first line of the server's --token-file)")
	}
	t, ok := p.tokens[tokenID(token)]
	if !ok {
		g.failed(p, remote)
		return nil, badCredentials("the token is not one of the access file's")
	}
	return g.verifyCached(p, remote, m, "token:"+t.Name, "token\x00"+token, func() bool {
		okv, _ := VerifySecret(t.Hash, token)
		return okv
	})
}

// verifyCached runs verify, which costs tens of milliseconds by design,
// once per credential while the policy is in force.
func (g *Guard) verifyCached(p *policy, remote string, m Method, id, cred string, verify func() bool) (*Principal, *Denial) {
	key := sha256.Sum256([]byte(string(m) + "\x00" + cred))
	g.mu.Lock()
	v, ok := g.verified[key]
	g.mu.Unlock()
	if ok && v.id == id {
		return p.principal(v.id, v.method, nil), nil
	}
	if d := g.guessing(p, remote); d != nil {
		return nil, d
	}
	if !verify() {
		g.failed(p, remote)
		return nil, badCredentials("wrong user name, password or token")
	}
	g.remember(key, verifiedCred{id: id, method: m})
	return p.principal(id, m, nil), nil
}

// failed counts a failed authentication against the client address's
// anonymous budget, so guessing is as slow as the anonymous rate limit.
func (g *Guard) failed(p *policy, remote string) {
	if l := g.limiter(p, Anonymous+"@"+remote, Anonymous); l != nil {
		l.Allow()
	}
}

// guessing refuses to verify a credential for an address whose anonymous
// budget failed attempts have used up.
func (g *Guard) guessing(p *policy, remote string) *Denial {
	l := g.limiter(p, Anonymous+"@"+remote, Anonymous)
	if l == nil || l.TokensAt(g.now()) >= 1 {
		return nil
	}
	return &Denial{Status: http.StatusTooManyRequests, Code: CodeTooManyRequests, RetryAfter: 1,
		Message: "too many failed authentications from " + remote + "; retry later"}
}

func badCredentials(why string) *Denial {
	return &Denial{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: "authentication failed: " + why + "; " + howToAuthenticate}
}

// howToAuthenticate ends every 401's message.
const howToAuthenticate = "send HTTP Basic (Confluent clients: basic.auth.user.info=USER:PASSWORD), a bearer token or JWT, or a client certificate"

// limiter returns the bucket of key, limited as principal id is, or nil
// when the access file sets no rate limit.
func (g *Guard) limiter(p *policy, key, id string) *rate.Limiter {
	if p.rate == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	l, ok := g.limits[key]
	if !ok {
		lim := Limit{RPS: p.rate.RPS, Burst: p.rate.Burst}
		if o, ok := p.rate.Principals[id]; ok {
			lim = o
		}
		if lim.Burst <= 0 {
			lim.Burst = max(1, int(math.Ceil(lim.RPS)))
		}
		if len(g.limits) >= maxCached {
			g.limits = map[string]*rate.Limiter{}
		}
		l = rate.NewLimiter(rate.Limit(lim.RPS), lim.Burst)
		g.limits[key] = l
	}
	return l
}

func (g *Guard) limit(p *policy, key, id string) *Denial {
	l := g.limiter(p, key, id)
	if l == nil {
		return nil
	}
	now := g.now()
	res := l.ReserveN(now, 1)
	delay := res.DelayFrom(now)
	if res.OK() && delay == 0 {
		return nil
	}
	res.CancelAt(now)
	secs := max(1, int(math.Ceil(delay.Seconds())))
	return &Denial{Status: http.StatusTooManyRequests, Code: CodeTooManyRequests, RetryAfter: secs,
		Message: fmt.Sprintf("rate limit of %s exceeded (%g requests/s, burst %d); retry after %d s", id, float64(l.Limit()), l.Burst(), secs)}
}

// remoteHost is the client's IP address, without the port.
func remoteHost(r *http.Request) string {
	h, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return h
}
