package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/msgcontract/msgcontract/registry/access"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/datacontract"
	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

type checkData struct {
	Subject, Schema, Refs string
	Subjects              []string
	// Checked is set once the form was submitted.
	Checked    bool
	Invalid    []string
	Level      compat.Level
	Against    []int
	NewSubject bool
	Violations []compat.Violation
	Table      diffTable
	Elsewhere  []compat.Violation
	Latest     int
	// Error is a failed registration's answer.
	Error string
}

// checkForm shows the form: a subject and a pasted schema.
func (c *Console) checkForm(w http.ResponseWriter, r *http.Request) {
	d := checkData{Subject: r.URL.Query().Get("s")}
	if d.Subject != "" {
		if v, err := c.cfg.Store.Version(r.Context(), d.Subject, subjectref.Latest, false); err == nil {
			d.Schema = v.Schema.Text
			d.Refs = refsText(v.Schema.References)
		}
	}
	c.renderCheck(w, r, http.StatusOK, d)
}

func (c *Console) renderCheck(w http.ResponseWriter, r *http.Request, status int, d checkData) {
	if names, err := c.cfg.Store.Subjects(r.Context(), false); err == nil && len(names) <= 2000 {
		d.Subjects = names // a datalist of 10,000 names helps nobody
	}
	c.render(w, r, status, "check", "Check a schema", "check", d)
}

// check tests the pasted schema against the subject as registering it
// would (the subject's level, transitively for _TRANSITIVE levels) and
// shows the violations inline in a diff against the latest version.
func (c *Console) check(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	d := formData(r)
	if d.Subject == "" {
		d.Invalid = []string{"name the subject to test against, e.g. payment-value"}
		c.renderCheck(w, r, http.StatusUnprocessableEntity, d)
		return
	}
	refs, err := c.parseRefs(r, d.Schema, d.Refs)
	if err != nil {
		d.Invalid = []string{err.Error()}
		c.renderCheck(w, r, http.StatusUnprocessableEntity, d)
		return
	}
	d.Refs = refsText(refs)
	next, err := c.compileSent(ctx, d.Subject, d.Schema, refs)
	var ie *schema.InvalidError
	switch {
	case errors.As(err, &ie):
		d.Invalid = ie.Lines
		c.renderCheck(w, r, http.StatusUnprocessableEntity, d)
		return
	case err != nil:
		d.Invalid = []string{err.Error()}
		c.renderCheck(w, r, http.StatusUnprocessableEntity, d)
		return
	}
	live, err := c.cfg.Store.Versions(ctx, d.Subject, false)
	if errors.Is(err, store.ErrSubjectNotFound) {
		d.NewSubject = true
		c.renderCheck(w, r, http.StatusOK, d)
		return
	}
	if err != nil {
		c.storeFail(w, r, err, "subject "+d.Subject)
		return
	}
	if d.Level, _, err = c.levelOf(ctx, d.Subject); err != nil {
		c.storeFail(w, r, err, "reading the level of "+d.Subject)
		return
	}
	hist := live
	if !d.Level.Transitive() {
		hist = live[len(live)-1:]
	}
	// Closures, as the registry compares them: what the referenced
	// versions define counts too.
	sets := make([]*compat.Schema, len(hist))
	for i, v := range hist {
		p, err := c.compile(ctx, d.Subject, v.Schema)
		if err != nil {
			c.fail(w, r, http.StatusInternalServerError, "%v", err)
			return
		}
		sets[i] = compat.PrepareClosure(p.Set)
		d.Against = append(d.Against, v.Version)
	}
	if d.Level != compat.None {
		d.Violations = compat.CheckSchemas(d.Level, sets, compat.PrepareClosure(next.Set))
		for i := range d.Violations {
			d.Violations[i].Against = hist[d.Violations[i].Against].Version
		}
	}
	latest := live[len(live)-1]
	d.Latest = latest.Version
	d.Table.Lines, d.Elsewhere = diffLines(latest.Schema.Text, next.Text, subjectref.FileName(d.Subject), d.Violations)
	c.renderCheck(w, r, http.StatusOK, d)
}

// register sends the checked schema to the registry's own API, so it
// passes the same checks as any client's registration. The form must
// carry confirm=yes (the box ticked on the check result) and, when the
// registry has one, the token.
func (c *Console) register(w http.ResponseWriter, r *http.Request) {
	d := formData(r)
	if r.PostFormValue("confirm") != "yes" {
		d.Error = "tick the confirmation box to register"
		c.renderCheck(w, r, http.StatusBadRequest, d)
		return
	}
	who, why := c.actor(r)
	if who == nil {
		d.Error = why
		c.renderCheck(w, r, http.StatusUnauthorized, d)
		return
	}
	if ok, why := c.mayWrite(who, access.Writer, d.Subject, "registering in "+d.Subject); !ok {
		d.Error = why
		c.renderCheck(w, r, denyStatus(who), d)
		return
	}
	refs, err := c.parseRefs(r, d.Schema, d.Refs)
	if err != nil {
		d.Error = err.Error()
		c.renderCheck(w, r, http.StatusUnprocessableEntity, d)
		return
	}
	reqBody := map[string]any{"schemaType": schema.Type, "schema": d.Schema, "references": refs}
	// The data contract the contract implies goes with it, as `msgcontract
	// registry push` sends it; a schema that does not compile is left to
	// the registry to refuse.
	if p, err := c.compileSent(r.Context(), d.Subject, d.Schema, refs); err == nil && p.Set != nil && len(p.Set.Files) > 0 {
		reqBody["metadata"], reqBody["ruleSet"] = datacontract.FromContract(p.Set.Files[0])
	}
	body, _ := json.Marshal(reqBody)
	// The API admits the request as the form's writer, checks the role
	// again and records the principal in the audit log.
	req := httptest.NewRequestWithContext(access.WithPrincipal(r.Context(), who), http.MethodPost, "/subjects/"+url.PathEscape(d.Subject)+"/versions", bytes.NewReader(body))
	req.Header.Set("Content-Type", api.ContentType)
	req.RemoteAddr = r.RemoteAddr
	rec := httptest.NewRecorder()
	c.cfg.API.ServeHTTP(rec, req)
	var answer struct {
		ID      int64  `json:"id"`
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || rec.Code != http.StatusOK {
		d.Error = fmt.Sprintf("the registry answered HTTP %d: %s", rec.Code, strings.TrimSpace(answer.Message))
		c.renderCheck(w, r, rec.Code, d)
		return
	}
	vs, err := c.cfg.Store.SubjectVersionsByID(r.Context(), answer.ID, false)
	if err != nil {
		c.storeFail(w, r, err, "looking up the registered schema")
		return
	}
	version := 0
	for _, sv := range vs {
		if sv.Subject == d.Subject {
			version = max(version, sv.Version)
		}
	}
	http.Redirect(w, r, "/ui/version?s="+url.QueryEscape(d.Subject)+"&v="+strconv.Itoa(version)+"&registered=1", http.StatusSeeOther)
}

// formData reads the check and register forms. Browsers send a
// textarea's line breaks as CRLF; the schema is stored with LF, as the
// file it was pasted from most likely had them.
func formData(r *http.Request) checkData {
	lf := strings.NewReplacer("\r\n", "\n", "\r", "\n")
	return checkData{
		Subject: strings.TrimSpace(r.PostFormValue("subject")),
		Schema:  lf.Replace(r.PostFormValue("schema")),
		Refs:    lf.Replace(r.PostFormValue("refs")),
		Checked: true,
	}
}

var importRE = regexp.MustCompile(`(?m)^\s*import\s+(?:public\s+|weak\s+)?"([^"]+)"`)

// parseRefs reads references, one "import/path.proto SUBJECT VERSION" a
// line. Without any, each import other than msgcontract's options and the
// well-known types refers to the latest version of the subject named by
// its import path, as `msgcontract registry push` registers them.
func (c *Console) parseRefs(r *http.Request, text, raw string) ([]subjectref.Reference, error) {
	var refs []subjectref.Reference
	for i, line := range strings.Split(raw, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("references line %d: %q: want IMPORT_PATH SUBJECT VERSION", i+1, line)
		}
		v, err := strconv.Atoi(f[2])
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("references line %d: version %q is not a positive number", i+1, f[2])
		}
		refs = append(refs, subjectref.Reference{Name: f[0], Subject: f[1], Version: v})
	}
	if len(refs) > 0 {
		return refs, nil
	}
	for _, m := range importRE.FindAllStringSubmatch(text, -1) {
		path := m[1]
		if schema.IsBuiltin(path) {
			continue // resolves without a reference
		}
		v, err := c.cfg.Store.Version(r.Context(), path, subjectref.Latest, false)
		if err != nil {
			return nil, fmt.Errorf("import %q: no subject %q to refer to (%v); register it first or list the references", path, path, err)
		}
		refs = append(refs, subjectref.Reference{Name: path, Subject: path, Version: v.Version})
	}
	return refs, nil
}

func refsText(refs []subjectref.Reference) string {
	var b strings.Builder
	for _, r := range refs {
		fmt.Fprintf(&b, "%s %s %d\n", r.Name, r.Subject, r.Version)
	}
	return b.String()
}
