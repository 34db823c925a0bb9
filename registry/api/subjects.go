package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// fetch resolves references from the store. A reference pins a version,
// which still resolves after a soft delete, so that schemas registered
// against it keep compiling.
func (s *Server) fetch(ctx context.Context, subject string, version int) (string, []subjectref.Reference, error) {
	v, err := s.cfg.Store.Version(ctx, subject, version, version != subjectref.Latest)
	if errors.Is(err, store.ErrSubjectNotFound) || errors.Is(err, store.ErrVersionNotFound) {
		which := strconv.Itoa(version)
		if version == subjectref.Latest {
			which = "latest"
		}
		return "", nil, &schema.InvalidError{Lines: []string{fmt.Sprintf(
			"reference to subject %q version %s does not resolve (%v); register the imported file under that subject first", subject, which, err)}}
	}
	if err != nil {
		return "", nil, err
	}
	// Its references are read in its subject's context.
	return v.Schema.Text, subjectref.InContext(v.Subject, v.Schema.References), nil
}

// pin returns refs, made by a schema of subject, with every version given
// as -1, 0 or left out replaced by the number of the referenced subject's
// (read in subject's context) latest version now: the version that is
// compiled is the one stored, so that referencedby finds the reference
// and later registrations on the referenced subject cannot change what
// this schema means.
func (s *Server) pin(ctx context.Context, subject string, refs []subjectref.Reference) ([]subjectref.Reference, error) {
	in := subjectref.InContext(subject, refs)
	var out []subjectref.Reference
	for i, r := range refs {
		if r.Version > 0 {
			continue
		}
		if out == nil {
			out = append([]subjectref.Reference(nil), refs...)
		}
		if r.Subject == "" {
			return nil, &schema.InvalidError{Lines: []string{fmt.Sprintf("reference %q names no subject", r.Name)}}
		}
		v, err := s.cfg.Store.Version(ctx, in[i].Subject, subjectref.Latest, false)
		if errors.Is(err, store.ErrSubjectNotFound) || errors.Is(err, store.ErrVersionNotFound) {
			return nil, &schema.InvalidError{Lines: []string{fmt.Sprintf(
				"reference %q to the latest version of subject %q does not resolve: the subject has no live version; register the imported file under that subject first", r.Name, in[i].Subject)}}
		}
		if err != nil {
			return nil, err
		}
		out[i].Version = v.Version
	}
	if out == nil {
		return refs, nil
	}
	return out, nil
}

// Compiled returns a stored schema compiled under subject, from the
// server's bounded cache of compiled stored schemas, which the web console
// shares.
func (s *Server) Compiled(ctx context.Context, subject string, sc store.Schema) (*schema.Parsed, error) {
	c, err := s.compiled(ctx, subject, sc)
	if err != nil {
		return nil, err
	}
	return c.p, nil
}

// CompileRequest compiles a schema a client sent, with its references, as
// the subject's file, bounded as the API's look-ups and checks are (the
// compile gate, and the workers when configured): for the web console's
// check form. A schema that does not compile is a *schema.InvalidError; a
// refused compilation an *Error.
func (s *Server) CompileRequest(ctx context.Context, subject, text string, refs []subjectref.Reference) (*schema.Parsed, error) {
	return s.compileRequest(ctx, s.gate, subject, &request{Schema: &text, References: refs})
}

// compiled returns the stored schema sc compiled under subject, from the
// cache when it is there.
func (s *Server) compiled(ctx context.Context, subject string, sc store.Schema) (*compiled, error) {
	key := parsedKey{subject, sc.ID}
	if c, ok := s.parsed.Get(key); ok {
		return c, nil
	}
	if sc.Text == "" {
		// A version head (store.VersionHeads): read the schema itself.
		full, err := s.cfg.Store.SchemaByID(ctx, sc.ID)
		if err != nil {
			return nil, err
		}
		sc = full
	}
	// Stored schemas compile outside the request's budget: the result is
	// cached, so the work serves the next request even if this one gave up,
	// and a subject with many versions must be able to warm up at all.
	p, err := schema.Parse(context.WithoutCancel(ctx), subjectref.FileName(subject), sc.Text, subjectref.InContext(subject, sc.References), s.fetch)
	if err != nil {
		// Not the client's schema at fault: report it as a store error.
		return nil, fmt.Errorf("schema %d stored under %s no longer compiles: %v", sc.ID, subject, err)
	}
	c := &compiled{p: p, prep: compat.PrepareClosure(p.Set)}
	s.parsed.Put(key, c)
	return c, nil
}

func (s *Server) level(ctx context.Context, subject string) (compat.Level, error) {
	for _, key := range scopes(subject) {
		l, err := s.cfg.Store.Config(ctx, key)
		if errors.Is(err, store.ErrConfigNotFound) {
			continue
		}
		if err != nil {
			return "", err
		}
		return compat.ParseLevel(l)
	}
	return s.cfg.DefaultLevel, nil
}

// violations checks next against history at level.
// violations checks next against history at level; with each, a violation
// is reported against every version it breaks (see checkEach).
func (s *Server) violations(ctx context.Context, subject string, level compat.Level, history []store.Version, next *schema.Parsed, each bool) ([]compat.Violation, error) {
	if level == compat.None || len(history) == 0 {
		return nil, nil
	}
	if !level.Transitive() {
		history = history[len(history)-1:]
	}
	sets := make([]*schemaSet, len(history))
	for i, v := range history {
		c, err := s.compiled(ctx, subject, v.Schema)
		if err != nil {
			return nil, err
		}
		sets[i] = &schemaSet{c.prep, v.Version, v.Schema.ID}
	}
	n := &newSchema{compat.PrepareClosure(next.Set), compat.Fingerprint(next.Fingerprint)}
	if each {
		return s.checkEach(level, sets, n), nil
	}
	return s.checkSets(level, sets, n), nil
}

type schemaSet struct {
	prep    *compat.Schema
	version int
	id      int64
}

// newSchema is a schema being checked, with what identifies it in the
// memo of pairwise checks.
type newSchema struct {
	prep *compat.Schema
	fp   compat.Fingerprint
}

// checkEach checks next against every set on its own, at level's
// directions, so that a violation repeated against several versions is
// listed once per version.
func (s *Server) checkEach(level compat.Level, sets []*schemaSet, next *newSchema) []compat.Violation {
	single := nonTransitive(level)
	var out []compat.Violation
	for _, set := range sets {
		out = append(out, s.checkSets(single, []*schemaSet{set}, next)...)
	}
	return out
}

// checkSets checks next against sets at level; pairs checked before are
// answered by the server's memo.
func (s *Server) checkSets(level compat.Level, sets []*schemaSet, next *newSchema) []compat.Violation {
	hist := make([]*compat.Schema, len(sets))
	ids := make([]int64, len(sets))
	for i, set := range sets {
		hist[i], ids[i] = set.prep, set.id
	}
	vs := s.memo.CheckSchemas(level, hist, ids, next.prep, next.fp)
	for i := range vs {
		vs[i].Against = sets[vs[i].Against].version
	}
	return vs
}

func lines(vs []compat.Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("%s (against version %d)", v, v.Against)
	}
	return out
}

// incompatible is the 409 answer to a registration that breaks the level.
func incompatible(subject string, level compat.Level, vs []compat.Violation) *Error {
	return apiErr(http.StatusConflict, CodeIncompatible,
		"Schema being registered is incompatible with an earlier schema for subject %q (level %s); details: [%s]",
		subject, level, strings.Join(lines(vs), "; "))
}

func (s *Server) register(c echo.Context) error {
	ctx := c.Request().Context()
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	if err := validSubject(subject); err != nil {
		return err
	}
	mode, err := s.writable(ctx, subject)
	if err != nil {
		return err
	}
	req, err := s.readSchemaRequest(c)
	if err != nil {
		return err
	}
	if mode != ModeImport && req.ID != 0 {
		return apiErr(http.StatusUnprocessableEntity, CodeOperationNotAllowed,
			"Subject '%s' is not in IMPORT mode: a registration may give \"id\" only in IMPORT mode (PUT /mode/{subject} {\"mode\": \"IMPORT\"})", subject)
	}
	// Outside IMPORT mode a "version" is a compare-and-set, as in
	// Confluent: the registration must make that version (-1: any).
	if req.ID < 0 || req.Version < -1 || (mode == ModeImport && req.Version < 0) {
		return apiErr(http.StatusUnprocessableEntity, CodeInvalidVersion, "\"id\" and \"version\" must be positive")
	}
	p, err := s.parseRequest(ctx, s.writeGate, subject, &req)
	if err != nil {
		return err
	}
	sc := store.Schema{Type: schema.Type, Text: p.Text, Descriptor: p.Descriptor, References: req.References}
	if mode == ModeImport {
		// As sent: an import copies another registry's versions.
		sent := encodeContract(req.Metadata, req.RuleSet)
		sc.Metadata, sc.RuleSet = sent.metadata, sent.ruleSet
		// Importing copies another registry: its ids and versions, and no
		// compatibility check (the source checked them).
		reg, err := s.cfg.Store.Import(ctx, subject, sc, req.ID, req.Version)
		if errors.Is(err, store.ErrImportConflict) {
			return apiErr(http.StatusUnprocessableEntity, CodeOperationNotAllowed, "Cannot import: %v", err)
		}
		if err != nil {
			return storeErr(err, subject, "")
		}
		return reply(c, http.StatusOK, map[string]int64{"id": reg.ID})
	}
	var final store.Schema
	reg, err := s.cfg.Store.RegisterPrepared(ctx, subject, sc, s.prepareRegistration(subject, &req, &final), func(ctx context.Context, live []store.Version) error {
		level, err := s.level(ctx, subject)
		if err != nil {
			return err
		}
		conf, err := s.effectiveConfig(ctx, subject)
		if err != nil {
			return err
		}
		if live, err = inGroup(conf, final, live); err != nil {
			return err
		}
		vs, err := s.violations(ctx, subject, level, live, p, false)
		if err != nil {
			return err
		}
		if len(vs) > 0 {
			return incompatible(subject, level, vs)
		}
		return nil
	})
	if err != nil {
		return storeErr(err, subject, "")
	}
	s.parsed.Put(parsedKey{subject, reg.ID}, &compiled{p: p, prep: compat.PrepareClosure(p.Set)})
	return reply(c, http.StatusOK, map[string]int64{"id": reg.ID})
}

func (s *Server) listSubjects(c echo.Context) error {
	deletedOnly := boolQuery(c, "deletedOnly")
	subs, err := s.cfg.Store.Subjects(c.Request().Context(), deletedOnly || boolQuery(c, "deleted"))
	if err != nil {
		return storeErr(err, "", "")
	}
	var live map[string]bool
	if deletedOnly {
		// A subject is soft deleted when it has versions and none live.
		liveSubs, err := s.cfg.Store.Subjects(c.Request().Context(), false)
		if err != nil {
			return storeErr(err, "", "")
		}
		live = map[string]bool{}
		for _, l := range liveSubs {
			live[l] = true
		}
	}
	// Without subjectPrefix, subjects of every context are listed
	// (qualified ones as ":.ctx:name"); an empty one lists the default
	// context's, as in Confluent.
	prefix := c.QueryParam("subjectPrefix")
	_, given := c.QueryParams()["subjectPrefix"]
	defaultOnly := given && prefix == ""
	out := []string{}
	for _, sub := range subs {
		if ctx, _ := subjectref.Split(sub); defaultOnly && ctx != subjectref.DefaultContext {
			continue
		}
		if strings.HasPrefix(sub, prefix) && !live[sub] && readable(c, sub) {
			out = append(out, sub)
		}
	}
	page, err := paginate(c, out)
	if err != nil {
		return err
	}
	return reply(c, http.StatusOK, page)
}

// listContexts lists the schema contexts that have subjects, and the
// default one.
func (s *Server) listContexts(c echo.Context) error {
	ctxs, err := s.cfg.Store.Contexts(c.Request().Context())
	if err != nil {
		return storeErr(err, "", "")
	}
	out := ctxs[:0]
	for _, x := range ctxs {
		if readableContext(c, x) {
			out = append(out, x)
		}
	}
	return reply(c, http.StatusOK, out)
}

func (s *Server) listVersions(c echo.Context) error {
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	deletedOnly := boolQuery(c, "deletedOnly")
	vs, err := s.cfg.Store.Versions(c.Request().Context(), subject, deletedOnly || boolQuery(c, "deleted"))
	if err != nil {
		return storeErr(err, subject, "")
	}
	out := []int{}
	for _, v := range vs {
		if !deletedOnly || v.Deleted {
			out = append(out, v.Version)
		}
	}
	page, err := paginate(c, out)
	if err != nil {
		return err
	}
	return reply(c, http.StatusOK, page)
}

// versionResponse is a subject version as Confluent returns it.
type versionResponse struct {
	Subject    string                 `json:"subject"`
	Version    int                    `json:"version"`
	ID         int64                  `json:"id"`
	SchemaType string                 `json:"schemaType"`
	References []subjectref.Reference `json:"references,omitempty"`
	Metadata   json.RawMessage        `json:"metadata,omitempty"`
	RuleSet    json.RawMessage        `json:"ruleSet,omitempty"`
	Schema     string                 `json:"schema"`
}

// schemaText is the schema as the request's format asks: .proto text, or
// with format=serialized the base64 FileDescriptorProto.
func schemaText(c echo.Context, sc store.Schema) string {
	if c.QueryParam("format") == "serialized" && len(sc.Descriptor) > 0 {
		return base64.StdEncoding.EncodeToString(sc.Descriptor)
	}
	return sc.Text
}

func (s *Server) version(c echo.Context) (store.Version, error) {
	subject, err := subjectParam(c)
	if err != nil {
		return store.Version{}, err
	}
	n, err := versionParam(c)
	if err != nil {
		return store.Version{}, err
	}
	v, err := s.cfg.Store.Version(c.Request().Context(), subject, n, boolQuery(c, "deleted"))
	if err != nil {
		return store.Version{}, storeErr(err, subject, c.Param("version"))
	}
	return v, nil
}

func (s *Server) getVersion(c echo.Context) error {
	v, err := s.version(c)
	if err != nil {
		return err
	}
	return reply(c, http.StatusOK, versionResponse{
		Subject: v.Subject, Version: v.Version, ID: v.Schema.ID, SchemaType: schema.Type,
		References: v.Schema.References, Metadata: rawJSON(v.Schema.Metadata), RuleSet: rawJSON(v.Schema.RuleSet),
		Schema: schemaText(c, v.Schema),
	})
}

func (s *Server) getVersionSchema(c echo.Context) error {
	v, err := s.version(c)
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, echo.MIMETextPlainCharsetUTF8, []byte(schemaText(c, v.Schema)))
}

// referencedBy lists the ids of schemas, used by live versions, whose
// references name this version.
func (s *Server) referencedBy(c echo.Context) error {
	v, err := s.version(c)
	if err != nil {
		return err
	}
	ids, err := s.cfg.Store.ReferencedBy(c.Request().Context(), v.Subject, v.Version)
	if err != nil {
		return storeErr(err, v.Subject, "")
	}
	return reply(c, http.StatusOK, ids)
}

func (s *Server) lookup(c echo.Context) error {
	ctx := c.Request().Context()
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	req, err := s.readSchemaRequest(c)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Store.Versions(ctx, subject, false); err != nil {
		return storeErr(err, subject, "")
	}
	p, err := s.parseRequest(ctx, s.gate, subject, &req)
	if err != nil {
		return err
	}
	v, err := s.lookupContract(ctx, subject, store.Schema{Type: schema.Type, Text: p.Text, Descriptor: p.Descriptor, References: req.References}, &req, boolQuery(c, "deleted"))
	if err != nil {
		return storeErr(err, subject, "")
	}
	return reply(c, http.StatusOK, versionResponse{
		Subject: v.Subject, Version: v.Version, ID: v.Schema.ID, SchemaType: schema.Type,
		References: v.Schema.References, Metadata: rawJSON(v.Schema.Metadata), RuleSet: rawJSON(v.Schema.RuleSet),
		Schema: schemaText(c, v.Schema),
	})
}

func (s *Server) deleteSubject(c echo.Context) error {
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	if _, err := s.writable(c.Request().Context(), subject); err != nil {
		return err
	}
	permanent := boolQuery(c, "permanent")
	// As in Confluent's registry, neither a soft nor a permanent delete
	// may take away a version that live schemas reference.
	all, err := s.cfg.Store.Versions(c.Request().Context(), subject, true)
	if err != nil {
		return storeErr(err, subject, "")
	}
	for _, v := range all {
		if err := s.unreferenced(c.Request().Context(), subject, v.Version); err != nil {
			return err
		}
	}
	vs, err := s.cfg.Store.DeleteSubject(c.Request().Context(), subject, permanent)
	if err != nil {
		return storeErr(err, subject, "")
	}
	if permanent {
		s.forget()
	}
	return reply(c, http.StatusOK, vs)
}

func (s *Server) deleteVersion(c echo.Context) error {
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	if _, err := s.writable(c.Request().Context(), subject); err != nil {
		return err
	}
	n, err := versionParam(c)
	if err != nil {
		return err
	}
	permanent := boolQuery(c, "permanent")
	if n == subjectref.Latest {
		v, err := s.cfg.Store.Version(c.Request().Context(), subject, n, false)
		if err != nil {
			return storeErr(err, subject, c.Param("version"))
		}
		n = v.Version
	}
	if err := s.unreferenced(c.Request().Context(), subject, n); err != nil {
		return err
	}
	v, err := s.cfg.Store.DeleteVersion(c.Request().Context(), subject, n, permanent)
	if err != nil {
		return storeErr(err, subject, c.Param("version"))
	}
	if permanent {
		s.forget()
	}
	return reply(c, http.StatusOK, v)
}

// unreferenced refuses to delete a version that live schemas import
// through a reference: they would no longer compile, or would compile
// against another version than the one they were checked with.
func (s *Server) unreferenced(ctx context.Context, subject string, version int) error {
	ids, err := s.cfg.Store.ReferencedBy(ctx, subject, version)
	if err != nil {
		return storeErr(err, subject, "")
	}
	if len(ids) > 0 {
		return apiErr(http.StatusUnprocessableEntity, CodeReferenceExists,
			"One or more references exist to subject %q version %d (schema ids %v); delete those versions first", subject, version, ids)
	}
	return nil
}

// forget drops cached schema responses after a permanent delete, which
// can make an id unknown.
func (s *Server) forget() {
	s.byID.Range(func(k, _ any) bool {
		s.byID.Delete(k)
		return true
	})
}
