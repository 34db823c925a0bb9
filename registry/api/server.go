// Package api serves the registry over HTTP: the subset of the Confluent
// Schema Registry REST API that Confluent's clients use, for schemaType
// PROTOBUF, with Confluent's content type and error codes, so existing
// serializers and tools work against it unchanged.
package api

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/access"
	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/datacontract"
	"github.com/msgcontract/msgcontract/registry/internal/lru"
	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// openAPI is the OpenAPI 3 document of this API, served at /openapi.json
// and checked against the live server by TestOpenAPISchemathesis.
//
//go:embed openapi.json
var openAPI []byte

// ContentType is the Confluent Schema Registry media type responses carry
// unless the request's Accept header prefers another of Confluent's
// (see negotiate).
const ContentType = "application/vnd.schemaregistry.v1+json"

// DefaultBodyLimit is the largest request body accepted unless
// Config.BodyLimit says otherwise.
const DefaultBodyLimit = 4 << 20

// Config configures a Server. Store is required.
type Config struct {
	Store *store.Store
	// Access, when set, authenticates requests and decides what each
	// principal may do (see package access and the needs table in
	// access.go). Without it, Token applies.
	Access *access.Guard
	// Token, when set and Access is not, is the bearer token every
	// mutating request (registering, deleting, changing config) must
	// carry, as "Authorization: Bearer <token>" or as the password of
	// HTTP Basic authentication (any user name), as Confluent's clients
	// send it; reads need none. Neither set: anyone may do anything.
	Token string
	// BodyLimit caps request bodies; larger ones get 413. Default
	// DefaultBodyLimit.
	BodyLimit int64
	// DefaultLevel applies where neither the subject nor the registry has
	// a level configured. Default BACKWARD, as in Confluent's registry.
	DefaultLevel compat.Level
	// MaxCompilations caps how many request schemas compile at once; more
	// wait, up to CompileTimeout. Default half the CPUs, at least 1, so
	// that reads keep a core while large schemas compile.
	MaxCompilations int
	// CompileTimeout bounds how long a request waits for a compilation
	// slot and for its schema to compile; past it the answer is 503 with
	// error_code 50002 and the compilation stops. Default
	// DefaultCompileTimeout.
	CompileTimeout time.Duration
	// WriteCompileTimeout is CompileTimeout for registrations, which
	// compile in slots of their own (MaxCompilations more), so that
	// anonymous look-ups and checks cannot starve them. Default 30 s.
	WriteCompileTimeout time.Duration
	// Workers, when set, compile the schemas requests send in worker
	// processes, which are killed when a request's budget runs out, so no
	// CPU is spent on a request after it is answered (see schema.Pool).
	// Without it they compile in this process, where a compilation stops
	// only between protocompile's phases.
	Workers *schema.Pool
	// CompiledCache is how many compiled stored schemas are kept for
	// compatibility checks (least recently used go first). Default 2048.
	CompiledCache int
}

// DefaultCompileTimeout is Config.CompileTimeout's default: an ordinary
// schema compiles in milliseconds; a 1 MB one in about 1.5 s of CPU.
const DefaultCompileTimeout = 1500 * time.Millisecond

// memoPairs bounds the memo of pairwise checks: an entry is a key and,
// for a compatible pair, an empty list, so 100,000 take a few MB.
const memoPairs = 100_000

// DefaultMaxCompilations is Config.MaxCompilations' default: half the
// CPUs, at least 1.
func DefaultMaxCompilations() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// Validate reports missing required fields.
func (c *Config) Validate() error {
	if c.Store == nil {
		return errors.New("api: Config.Store is required")
	}
	return nil
}

func (c *Config) setDefaults() {
	if c.BodyLimit <= 0 {
		c.BodyLimit = DefaultBodyLimit
	}
	if c.DefaultLevel == "" {
		c.DefaultLevel = compat.Backward
	}
	if c.MaxCompilations <= 0 {
		c.MaxCompilations = DefaultMaxCompilations()
	}
	if c.CompileTimeout <= 0 {
		c.CompileTimeout = DefaultCompileTimeout
	}
	if c.CompiledCache <= 0 {
		c.CompiledCache = 2048
	}
	if c.WriteCompileTimeout <= 0 {
		c.WriteCompileTimeout = 30 * time.Second
	}
}

// Server is the registry's HTTP handler.
type Server struct {
	cfg  Config
	echo *echo.Echo
	// parsed caches compiled stored schemas; schemas are immutable.
	parsed *parsedCache
	// memo remembers pairwise checks of new schemas against stored ones.
	memo *compat.Memo
	// sent keeps recently compiled request schemas by fingerprint.
	sent *lru.Cache[[32]byte, *schema.Parsed]
	// byID caches GET /schemas/ids/{id} response bodies.
	byID sync.Map
	// gate bounds the cost of compiling the schemas of look-ups and
	// compatibility checks, writeGate that of registrations.
	gate, writeGate *compileGate
	// guard authenticates requests and holds the access rules.
	guard *access.Guard
}

// New returns a Server for cfg.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	s := &Server{cfg: cfg, parsed: newParsedCache(cfg.CompiledCache), memo: compat.NewMemo(memoPairs),
		sent:      lru.New[[32]byte, *schema.Parsed](sentKept),
		gate:      newCompileGate(cfg.MaxCompilations, cfg.CompileTimeout),
		writeGate: newCompileGate(cfg.MaxCompilations, cfg.WriteCompileTimeout),
	}
	g, err := access.GuardOr(cfg.Access, cfg.Token)
	if err != nil {
		return nil, err
	}
	s.guard = g
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(s.answerFirst, negotiate, recoverPanic, s.limitBody, s.authorize)
	s.routes(e)
	s.echo = e
	return s, nil
}

// CompileStats reports what bounding the cost of compilations has done
// for look-ups and compatibility checks.
func (s *Server) CompileStats() GateStats { return s.gate.Stats() }

// WorkerStats reports what the compilation workers did (zero without
// Config.Workers).
func (s *Server) WorkerStats() schema.PoolStats {
	if s.cfg.Workers == nil {
		return schema.PoolStats{}
	}
	return s.cfg.Workers.Stats()
}

// WaitCompilations blocks until no compilation runs, including ones whose
// requests were already answered, or until ctx is done.
func (s *Server) WaitCompilations(ctx context.Context) error {
	if err := s.gate.waitIdle(ctx); err != nil {
		return err
	}
	return s.writeGate.waitIdle(ctx)
}

// Guard is the server's access guard, which the console shares.
func (s *Server) Guard() *access.Guard { return s.guard }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.echo.ServeHTTP(w, r) }

func (s *Server) routes(e *echo.Echo) {
	e.GET("/", func(c echo.Context) error { return c.Blob(http.StatusOK, answerType(c), []byte("{}")) })
	e.GET("/openapi.json", func(c echo.Context) error { return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPI) })
	e.GET("/subjects", s.listSubjects)
	e.GET("/subjects/:subject/versions", s.listVersions)
	e.POST("/subjects/:subject/versions", s.register, s.budget(s.writeGate))
	e.GET("/subjects/:subject/versions/:version", s.getVersion)
	e.GET("/subjects/:subject/versions/:version/schema", s.getVersionSchema)
	e.GET("/subjects/:subject/versions/:version/referencedby", s.referencedBy)
	e.DELETE("/subjects/:subject/versions/:version", s.deleteVersion)
	e.POST("/subjects/:subject", s.lookup, s.budget(s.gate))
	e.DELETE("/subjects/:subject", s.deleteSubject)
	e.GET("/schemas", s.listSchemas)
	e.GET("/contexts", s.listContexts)
	e.GET("/schemas/types", func(c echo.Context) error { return reply(c, http.StatusOK, []string{schema.Type}) })
	e.GET("/schemas/ids/:id", s.getSchemaByID)
	e.GET("/schemas/ids/:id/schema", s.getSchemaTextByID)
	e.GET("/schemas/ids/:id/versions", s.getSchemaVersions)
	e.GET("/schemas/ids/:id/subjects", s.getSchemaSubjects)
	e.POST("/compatibility/subjects/:subject/versions/:version", s.checkOne, s.budget(s.gate))
	e.POST("/compatibility/subjects/:subject/versions", s.checkAll, s.budget(s.gate))
	e.GET("/mode", s.getMode)
	e.PUT("/mode", s.putMode)
	e.GET("/mode/:subject", s.getMode)
	e.PUT("/mode/:subject", s.putMode)
	e.DELETE("/mode/:subject", s.deleteMode)
	e.GET("/config", s.getGlobalConfig)
	e.PUT("/config", s.putGlobalConfig)
	e.DELETE("/config", s.deleteGlobalConfig)
	e.GET("/config/:subject", s.getSubjectConfig)
	e.PUT("/config/:subject", s.putSubjectConfig)
	e.DELETE("/config/:subject", s.deleteSubjectConfig)
}

// Error is a Confluent-style error response.
type Error struct {
	Status int    `json:"-"`
	Code   int    `json:"error_code"`
	Msg    string `json:"message"`
	// retryAfter, when set, is sent as Retry-After (seconds).
	retryAfter int
	// challenge adds the WWW-Authenticate challenges (a 401).
	challenge bool
}

func (e *Error) Error() string { return fmt.Sprintf("%d %d: %s", e.Status, e.Code, e.Msg) }

// Confluent's error codes.
const (
	CodeUnauthorized          = 40101
	CodeSubjectNotFound       = 40401
	CodeVersionNotFound       = 40402
	CodeSchemaNotFound        = 40403
	CodeSubjectSoftDeleted    = 40404
	CodeSubjectNotSoftDeleted = 40405
	CodeVersionSoftDeleted    = 40406
	CodeVersionNotSoftDeleted = 40407
	CodeConfigNotFound        = 40408
	CodeIncompatible          = 40901
	CodeInvalidSchema         = 42201
	CodeInvalidVersion        = 42202
	CodeInvalidLevel          = 42203
	CodeReferenceExists       = 42206
	CodeStore                 = 50001
)

func apiErr(status, code int, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// storeErr maps store errors to Confluent codes.
func storeErr(err error, subject string, version string) *Error {
	switch {
	case errors.Is(err, store.ErrSubjectNotFound):
		return apiErr(http.StatusNotFound, CodeSubjectNotFound, "Subject '%s' not found.", subject)
	case errors.Is(err, store.ErrVersionNotFound):
		return apiErr(http.StatusNotFound, CodeVersionNotFound, "Version %s not found.", version)
	case errors.Is(err, store.ErrSchemaNotFound):
		return apiErr(http.StatusNotFound, CodeSchemaNotFound, "Schema not found")
	case errors.Is(err, store.ErrSubjectSoftDeleted):
		return apiErr(http.StatusNotFound, CodeSubjectSoftDeleted, "Subject '%s' was soft deleted. Set permanent=true to delete permanently", subject)
	case errors.Is(err, store.ErrSubjectNotSoftDeleted):
		return apiErr(http.StatusNotFound, CodeSubjectNotSoftDeleted, "Subject '%s' was not deleted first before being permanently deleted", subject)
	case errors.Is(err, store.ErrVersionSoftDeleted):
		return apiErr(http.StatusNotFound, CodeVersionSoftDeleted, "Subject '%s' Version %s was soft deleted. Set permanent=true to delete permanently", subject, version)
	case errors.Is(err, store.ErrVersionNotSoftDeleted):
		return apiErr(http.StatusNotFound, CodeVersionNotSoftDeleted, "Subject '%s' Version %s was not deleted first before being permanently deleted", subject, version)
	case errors.Is(err, store.ErrConfigNotFound):
		return apiErr(http.StatusNotFound, CodeConfigNotFound, "Subject '%s' does not have subject-level compatibility configured", subject)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return timedOut("the request ran out of its time budget (%v); retry later", err)
	}
	var ie *schema.InvalidError
	if errors.As(err, &ie) {
		return apiErr(http.StatusUnprocessableEntity, CodeInvalidSchema, "Invalid schema: %s", ie.Error())
	}
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	return apiErr(http.StatusInternalServerError, CodeStore, "Error in the backend data store: %v", err)
}

func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var ae *Error
	if !errors.As(err, &ae) {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			ae = &Error{Status: he.Code, Code: he.Code, Msg: fmt.Sprint(he.Message)}
			if he.Code == http.StatusNotFound {
				ae.Msg = "HTTP 404 Not Found: no such endpoint " + c.Request().Method + " " + c.Request().URL.Path
			}
		} else {
			ae = storeErr(err, "", "")
		}
	}
	if ae.challenge {
		access.Challenge(c.Response().Header())
	}
	if ae.retryAfter > 0 {
		c.Response().Header().Set("Retry-After", strconv.Itoa(ae.retryAfter))
	}
	if ae.Code == CodeTimedOut {
		// The request's read deadline may have cancelled the connection's
		// context in net/http's background read; a request that came next
		// on this connection would start cancelled.
		c.Response().Header().Set(echo.HeaderConnection, "close")
	}
	b, err := json.Marshal(ae)
	if err != nil {
		return
	}
	// A length, so a client reads the whole answer while the server
	// still drains its request body (answerFirst) instead of waiting for
	// the end of a chunked one.
	c.Response().Header().Set(echo.HeaderContentLength, strconv.Itoa(len(b)))
	_ = c.Blob(ae.Status, answerType(c), b)
}

func reply(c echo.Context, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Blob(status, answerType(c), b)
}

// recoverPanic turns a panic in a handler into a 500 answer instead of a
// dropped connection.
func recoverPanic(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = apiErr(http.StatusInternalServerError, CodeStore, "internal error: %v", r)
			}
		}()
		return next(c)
	}
}

// limitBody answers 413 for bodies over the limit, before they are read
// when Content-Length says so, or while they are read otherwise.
func (s *Server) limitBody(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.ContentLength > s.cfg.BodyLimit {
			return tooLarge(s.cfg.BodyLimit)
		}
		c.Set(rawBodyKey, r.Body) // for drain, which must read past a timeout
		r.Body = http.MaxBytesReader(c.Response(), r.Body, s.cfg.BodyLimit)
		return next(c)
	}
}

func tooLarge(limit int64) *Error {
	return apiErr(http.StatusRequestEntityTooLarge, http.StatusRequestEntityTooLarge, "request body is larger than %d bytes", limit)
}

// subjectParam is the subject from the path, unescaped (clients escape
// slashes in subjects named after import paths).
func subjectParam(c echo.Context) (string, error) {
	raw := c.Param("subject")
	s, err := url.PathUnescape(raw)
	if err != nil || s == "" {
		return "", apiErr(http.StatusNotFound, CodeSubjectNotFound, "Subject '%s' not found.", raw)
	}
	if ctx, name := subjectref.Split(s); ctx == subjectref.DefaultContext && name != "" {
		s = name // ":.:name" is name, in the default context
	}
	return s, nil
}

// versionParam reads "latest", -1 or a positive version number.
func versionParam(c echo.Context) (int, error) {
	raw := c.Param("version")
	if raw == "latest" || raw == "-1" {
		return subjectref.Latest, nil
	}
	v, err := strconv.ParseInt(raw, 10, 32)
	if err != nil || v <= 0 {
		return 0, apiErr(http.StatusUnprocessableEntity, CodeInvalidVersion,
			"The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", raw)
	}
	return int(v), nil
}

func boolQuery(c echo.Context, name string) bool {
	v, _ := strconv.ParseBool(c.QueryParam(name))
	return v
}

// request is the body of register, lookup and compatibility requests.
type request struct {
	Schema     *string                `json:"schema"`
	SchemaType string                 `json:"schemaType"`
	References []subjectref.Reference `json:"references"`
	// ID and Version are honoured in IMPORT mode only.
	ID      int64 `json:"id"`
	Version int   `json:"version"`
	// Metadata and RuleSet are the schema's Confluent data contract; nil
	// when the request has none (a registration then keeps the previous
	// version's), as opposed to empty ones.
	Metadata *datacontract.Metadata `json:"metadata"`
	RuleSet  *datacontract.RuleSet  `json:"ruleSet"`
	// normalize is the query's normalize=true: the schema is replaced by
	// its canonical form (schema.Normalized) before anything else.
	normalize bool
}

func decode(c echo.Context, v any) error {
	body, err := io.ReadAll(c.Request().Body)
	clearReadDeadline(c)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(mbe.Limit)
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return timedOut("the request body did not arrive within the request's time budget: %v", err)
		}
		return apiErr(http.StatusBadRequest, CodeInvalidSchema, "cannot read the request body: %v", err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		where := ""
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			where = fmt.Sprintf(" at byte %d", se.Offset)
		case errors.As(err, &te):
			where = fmt.Sprintf(" (field %q must be a %s)", te.Field, te.Type)
		}
		return apiErr(http.StatusBadRequest, CodeInvalidSchema,
			"the request body is not valid JSON%s: %v; send e.g. {\"schemaType\": \"PROTOBUF\", \"schema\": \"syntax = \\\"proto3\\\"; ...\"}", where, err)
	}
	return nil
}

// parseRequest compiles a request's schema as the subject's file, resolving its
// references, which it first pins (see pin); failures come back as API
// errors.
func (s *Server) parseRequest(ctx context.Context, g *compileGate, subject string, req *request) (*schema.Parsed, error) {
	if !req.normalize {
		// normalize=true in the config in force normalizes without the query.
		conf, err := s.effectiveConfig(ctx, subject)
		if err != nil {
			return nil, storeErr(err, subject, "")
		}
		req.normalize = conf.Normalize != nil && *conf.Normalize
	}
	p, err := s.compileRequest(ctx, g, subject, req)
	if err == nil && req.normalize {
		p, err = s.normalized(ctx, g, subject, req, p)
	}
	if err != nil {
		return nil, storeErr(err, subject, "")
	}
	return p, nil
}

// normalized compiles p's canonical form (schema.Normalized) in place of
// the schema req sent, so that equivalent spellings are stored, looked up
// and checked as one text.
func (s *Server) normalized(ctx context.Context, g *compileGate, subject string, req *request, p *schema.Parsed) (*schema.Parsed, error) {
	n, err := schema.Normalized(p)
	if err != nil {
		return nil, err
	}
	req.Schema = &n
	return s.compileRequest(ctx, g, subject, req)
}

// compileRequest is parseRequest with the errors as they come: a
// *schema.InvalidError, a refusal of the gate, a store error.
func (s *Server) compileRequest(ctx context.Context, g *compileGate, subject string, req *request) (*schema.Parsed, error) {
	refs, err := s.pin(ctx, subject, req.References)
	if err != nil {
		return nil, err
	}
	// Stored as sent (pinned); resolved in the subject's context.
	req.References = refs
	src, err := schema.Fetch(ctx, subjectref.FileName(subject), *req.Schema, subjectref.InContext(subject, refs), s.fetch)
	if err != nil {
		return nil, err
	}
	// A schema sent again (a check before each deploy, then the
	// registration) compiles once.
	if p, ok := s.sent.Get(src.Fingerprint); ok {
		return p, nil
	}
	p, err := g.run(ctx, func(ctx context.Context) (*schema.Parsed, error) {
		if s.cfg.Workers != nil {
			return s.cfg.Workers.Compile(ctx, src)
		}
		return src.Compile(ctx)
	})
	if err == nil && len(src.Raw) <= maxKeptSent {
		s.sent.Put(src.Fingerprint, p)
	}
	return p, err
}

// Compiled request schemas are kept (sentKept of them, each sent as at
// most maxKeptSent bytes) so that one sent again does not compile again.
const (
	sentKept    = 256
	maxKeptSent = 256 << 10
)

func (s *Server) readSchemaRequest(c echo.Context) (request, error) {
	var req request
	if err := decode(c, &req); err != nil {
		return req, err
	}
	if req.Schema == nil {
		return req, apiErr(http.StatusUnprocessableEntity, CodeInvalidSchema, "Invalid schema: the request has no \"schema\" field")
	}
	if req.SchemaType == "" {
		req.SchemaType = schema.Type // the registry speaks only protobuf
	}
	req.normalize = boolQuery(c, "normalize")
	if err := req.RuleSet.Validate(); err != nil {
		return req, apiErr(http.StatusUnprocessableEntity, CodeInvalidRuleSet, "Invalid rule set: %v", err)
	}
	if req.SchemaType != schema.Type {
		return req, apiErr(http.StatusUnprocessableEntity, CodeInvalidSchema,
			"Invalid schema: schemaType %q is not supported; this registry stores PROTOBUF schemas only", req.SchemaType)
	}
	return req, nil
}
