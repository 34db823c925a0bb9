// Package console is the registry's web console, served at /ui/ by
// `msgcontract registry serve`: subjects, versions, highlighted schemas,
// diffs with each compatibility violation at its line, the contract view
// (events, retry schedule chart, state-machine diagrams, error ranges), a
// check-and-register form, and the dead letters of a configured queue.
//
// Pages are rendered on the server with html/template; the stylesheet and
// a small script (keyboard shortcuts) are embedded, so the console works
// offline and fetches nothing at run time. Every view is a GET with its
// state in the URL. Reads are open; writes (registering, replaying and
// purging dead letters) go through a confirmation step and need the
// registry's token when one is configured.
//
// Every form that POSTs is protected from cross-site request forgery
// twice: [http.CrossOriginProtection] refuses a post the browser marks as
// coming from another site (Sec-Fetch-Site, else Origin), and the form
// must carry a token, HMAC-SHA256 under the console's key
// ([Config.CSRFKey], or a random key per Console) of a random cookie the
// console gives each browser (HttpOnly, SameSite=Strict, Path=/ui/,
// Secure over TLS). A post that fails either gets a 403 page saying the
// form expired or came from another site and to reload the page. Both
// checks run before any handler, so a new POST route is covered; its
// form only adds {{template "csrf" $}}.
//
// Every response, static files and errors included, carries a
// Content-Security-Policy that allows only the console's own stylesheet
// and script (default-src 'none'; script-src 'self'; style-src 'self';
// img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri
// 'none'; frame-ancestors 'none'), X-Content-Type-Options: nosniff,
// Referrer-Policy: same-origin and X-Frame-Options: DENY. Templates and
// the Go code that writes HTML or SVG must therefore use classes from
// static/console.css and listeners in static/console.js: no style="...",
// <style>, inline <script> or on...= attribute (TestNoInlineScriptOrStyle
// and the browser tests fail on one).
package console

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/registry/access"
	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
)

// Prefix is where the console is mounted.
const Prefix = "/ui/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config configures a Console. Store and API are required.
type Config struct {
	// Store is the registry's store; the console reads it directly.
	Store *store.Store
	// API is the registry's REST handler. Registrations from the check
	// form are sent to it in-process, so they pass exactly the checks a
	// client's registration passes.
	API http.Handler
	// Access is the registry's access guard, the API's own, so the
	// console answers every principal as the API does. Without it, a
	// guard is made from Token.
	Access *access.Guard
	// Token, when set (the registry's --token-file), must be typed into
	// every form that changes something (registering, replaying,
	// purging) by a browser that sends no credentials of its own.
	Token string
	// DefaultLevel is the level of subjects and a registry with none
	// configured; it must match the API's. Default BACKWARD.
	DefaultLevel compat.Level
	// DLQ, when set, is the dead-letter store the console shows;
	// DLQName says which one it is (a file path or a NATS URL), for
	// the page heading.
	DLQ     dlq.Store
	DLQName string
	// PageSize is how many subjects or dead letters one page lists.
	// Default 50.
	PageSize int
	// CSRFKey is the key the console signs its form tokens with
	// (HMAC-SHA256 of a per-browser cookie). When empty, each Console
	// makes a random one, so a form shown before a restart is refused
	// after it and has to be reloaded. Set it, to the same at least 32
	// random bytes, when several registry instances sit behind one load
	// balancer, so that a form one instance rendered is accepted by the
	// others.
	CSRFKey []byte
}

// Validate reports missing required fields and a CSRFKey too short to
// sign with.
func (c *Config) Validate() error {
	var errs []error
	if c.Store == nil {
		errs = append(errs, errors.New("console: Config.Store is required"))
	}
	if c.API == nil {
		errs = append(errs, errors.New("console: Config.API is required (the registry handler registrations go to)"))
	}
	if n := len(c.CSRFKey); n > 0 && n < minCSRFKey {
		errs = append(errs, fmt.Errorf("console: Config.CSRFKey is %d bytes; use at least %d random bytes (head -c %d /dev/urandom), or none for a random key per process", n, minCSRFKey, minCSRFKey))
	}
	return errors.Join(errs...)
}

func (c *Config) setDefaults() {
	if c.DefaultLevel == "" {
		c.DefaultLevel = compat.Backward
	}
	if c.PageSize <= 0 {
		c.PageSize = 50
	}
}

// Console is the /ui/ handler.
type Console struct {
	cfg   Config
	mux   *http.ServeMux
	pages map[string]*template.Template
	// csrfKey signs the form tokens: Config.CSRFKey or a random key.
	csrfKey []byte
	// handler is mux behind the cross-site checks of every POST.
	handler http.Handler
	// guard authenticates and authorizes requests: Config.Access, or
	// one made from Config.Token.
	guard *access.Guard
}

// New returns a Console for cfg.
func New(cfg Config) (*Console, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	c := &Console{cfg: cfg, mux: http.NewServeMux(), csrfKey: newCSRFKey()}
	if len(cfg.CSRFKey) > 0 {
		c.csrfKey = append([]byte(nil), cfg.CSRFKey...)
	}
	g, err := access.GuardOr(cfg.Access, cfg.Token)
	if err != nil {
		return nil, err
	}
	c.guard = g
	if err := c.parseTemplates(); err != nil {
		return nil, err
	}
	static, _ := fs.Sub(staticFS, "static")
	c.mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	// Each page's access rule; see access.go. Registering and applying
	// to dead letters check the writer's role themselves, because the
	// token typed into the form may name the principal.
	read := func(sc scope, what string, h http.HandlerFunc) http.HandlerFunc {
		return c.need(access.Reader, sc, what, h)
	}
	c.mux.HandleFunc("GET /ui/{$}", read(anySubject, "list subjects", c.subjects))
	c.mux.HandleFunc("GET /ui/subject", read(theSubject, "read the subject", c.subject))
	c.mux.HandleFunc("GET /ui/version", read(theSubject, "read the subject", c.version))
	c.mux.HandleFunc("GET /ui/diff", read(theSubject, "read the subject", c.diff))
	c.mux.HandleFunc("GET /ui/contract", read(theSubject, "read the subject", c.contract))
	c.mux.HandleFunc("GET /ui/check", read(theSubject, "check a schema", c.checkForm))
	c.mux.HandleFunc("POST /ui/check", read(theSubject, "check a schema against the subject", c.check))
	c.mux.HandleFunc("POST /ui/register", read(theSubject, "register in the subject", c.register))
	c.mux.HandleFunc("GET /ui/dlq", read(allSubjects, "list dead letters", c.dlqList))
	c.mux.HandleFunc("GET /ui/dlq/record", read(allSubjects, "read dead letters", c.dlqRecord))
	c.mux.HandleFunc("GET /ui/dlq/confirm", read(allSubjects, "read dead letters", c.dlqConfirm))
	c.mux.HandleFunc("POST /ui/dlq/apply", read(allSubjects, "read dead letters", c.dlqApply))

	// Every POST passes the browser's cross-site signals first, then the
	// form token; see csrf.go.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.fail(w, r, http.StatusForbidden, "%s", csrfCrossSite)
	}))
	c.handler = cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, Prefix+"static/") {
			r = c.withCSRF(w, r)
		}
		if r.Method == http.MethodPost && !c.csrfValid(r) {
			c.refuseCSRF(w, r)
			return
		}
		c.mux.ServeHTTP(w, r)
	}))
	return c, nil
}

// securityHeaders are the headers every console response carries, pages
// and static files alike. The policy allows only the console's own
// stylesheet and script: no inline <script>, <style>, style="..." or
// on...= handler, in the templates or in the HTML and SVG the Go code
// writes (TestNoInlineScriptOrStyle checks every page).
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "same-origin",
	"X-Frame-Options":         "DENY",
}

// ServeHTTP implements http.Handler.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, v := range securityHeaders {
		h.Set(k, v)
	}
	if to, ok := c.unescapedSubject(r); ok {
		http.Redirect(w, r, to, http.StatusMovedPermanently)
		return
	}
	c.handler.ServeHTTP(w, r)
}

// unescapedSubject is where a link written before the console's subject
// links were fixed belongs: those escaped a subject twice, so that
// "a/b" arrives as "a%2Fb". When no subject has the name as it arrives
// and one has it unescaped, the answer is the same page for that one.
func (c *Console) unescapedSubject(r *http.Request) (string, bool) {
	q := r.URL.Query()
	s := q.Get("s")
	if r.Method != http.MethodGet || !strings.Contains(s, "%") {
		return "", false
	}
	u, err := url.QueryUnescape(s)
	if err != nil || u == s {
		return "", false
	}
	if _, err := c.cfg.Store.Versions(r.Context(), s, true); err == nil {
		return "", false
	}
	if _, err := c.cfg.Store.Versions(r.Context(), u, true); err != nil {
		return "", false
	}
	q.Set("s", u)
	return r.URL.Path + "?" + q.Encode(), true
}

// WithAPI serves ui under Prefix and everything else with api: the
// registry's handler with the console mounted.
func WithAPI(api http.Handler, ui http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/ui":
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, Prefix):
			ui.ServeHTTP(w, r)
		default:
			api.ServeHTTP(w, r)
		}
	})
}

// page is what every template gets.
type page struct {
	Title string
	// Nav is the active top-level section: subjects, check or dlq.
	Nav      string
	HasDLQ   bool
	NeedsKey bool
	// CSRF is the form token every POST form carries, in the hidden
	// field the "csrf" template writes.
	CSRF string
	Data any
}

func (c *Console) parseTemplates() error {
	funcs := template.FuncMap{
		// q escapes a query value. It is typed as a URL so that
		// html/template, which escapes query values itself, does not
		// escape the escapes again (a subject "a/b" linked as a%252Fb).
		"q":    func(s string) template.URL { return template.URL(url.QueryEscape(s)) },
		"plus": func(a, b int) int { return a + b },
		// when formats a time to the millisecond in UTC; zero is "—".
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.UTC().Format("2006-01-02 15:04:05.000 MST")
		},
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return err
	}
	c.pages = map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" || base == "partials" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", n)
		if err != nil {
			return fmt.Errorf("console: template %s: %w", n, err)
		}
		c.pages[base] = t
	}
	return nil
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name, title, nav string, data any) {
	t, ok := c.pages[name]
	if !ok {
		http.Error(w, "console: no template "+name, http.StatusInternalServerError)
		return
	}
	var b strings.Builder
	p := page{Title: title, Nav: nav, HasDLQ: c.cfg.DLQ != nil, NeedsKey: c.cfg.Token != "", CSRF: formToken(r), Data: data}
	if err := t.Execute(&b, p); err != nil {
		http.Error(w, "console: rendering "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// fail renders an error page saying what went wrong and what to do.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, status int, format string, args ...any) {
	c.render(w, r, status, "error", "Error", "", fmt.Sprintf(format, args...))
}

// storeFail maps store errors to 404 or 500 pages.
func (c *Console) storeFail(w http.ResponseWriter, r *http.Request, err error, what string) {
	status := http.StatusInternalServerError
	if errors.Is(err, store.ErrSubjectNotFound) || errors.Is(err, store.ErrVersionNotFound) || errors.Is(err, dlq.ErrNotFound) {
		status = http.StatusNotFound
	}
	c.fail(w, r, status, "%s: %v", what, err)
}
