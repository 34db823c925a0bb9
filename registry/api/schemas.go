package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

func idParam(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, apiErr(http.StatusNotFound, CodeSchemaNotFound, "Schema %s not found", c.Param("id"))
	}
	return id, nil
}

// schemaResponse is a schema by id as Confluent returns it.
type schemaResponse struct {
	SchemaType string                 `json:"schemaType"`
	References []subjectref.Reference `json:"references,omitempty"`
	Metadata   json.RawMessage        `json:"metadata,omitempty"`
	RuleSet    json.RawMessage        `json:"ruleSet,omitempty"`
	Schema     string                 `json:"schema"`
}

func (s *Server) getSchemaByID(c echo.Context) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	key := c.QueryParam("format") + ":" + c.Param("id")
	if b, ok := s.byID.Load(key); ok {
		return c.Blob(http.StatusOK, answerType(c), b.([]byte))
	}
	sc, err := s.cfg.Store.SchemaByID(c.Request().Context(), id)
	if err != nil {
		return storeErr(err, "", "")
	}
	b, err := json.Marshal(schemaResponse{SchemaType: schema.Type, References: sc.References,
		Metadata: rawJSON(sc.Metadata), RuleSet: rawJSON(sc.RuleSet), Schema: schemaText(c, sc)})
	if err != nil {
		return err
	}
	if !s.cfg.Store.Shared() {
		// Another instance may delete the id permanently; only a store
		// this process alone writes may answer from memory.
		s.byID.Store(key, b)
	}
	return c.Blob(http.StatusOK, answerType(c), b)
}

func (s *Server) getSchemaTextByID(c echo.Context) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	sc, err := s.cfg.Store.SchemaByID(c.Request().Context(), id)
	if err != nil {
		return storeErr(err, "", "")
	}
	return c.Blob(http.StatusOK, echo.MIMETextPlainCharsetUTF8, []byte(schemaText(c, sc)))
}

func (s *Server) getSchemaVersions(c echo.Context) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	svs, err := s.readableVersionsByID(c, id)
	if err != nil {
		return err
	}
	return reply(c, http.StatusOK, svs)
}

// readableVersionsByID is the subject versions holding schema id that the
// request's principal may read (soft-deleted ones too with ?deleted=true).
func (s *Server) readableVersionsByID(c echo.Context, id int64) ([]store.SubjectVersion, error) {
	svs, err := s.cfg.Store.SubjectVersionsByID(c.Request().Context(), id, boolQuery(c, "deleted"))
	if err != nil {
		return nil, storeErr(err, "", "")
	}
	out := svs[:0]
	for _, sv := range svs {
		if readable(c, sv.Subject) {
			out = append(out, sv)
		}
	}
	return out, nil
}

func (s *Server) getSchemaSubjects(c echo.Context) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	svs, err := s.readableVersionsByID(c, id)
	if err != nil {
		return err
	}
	subjects := []string{}
	for _, sv := range svs {
		if len(subjects) == 0 || subjects[len(subjects)-1] != sv.Subject {
			subjects = append(subjects, sv.Subject)
		}
	}
	return reply(c, http.StatusOK, subjects)
}

// paginate applies the offset and limit query parameters (limit -1 or
// absent: no limit), as Confluent's listings do.
func paginate[T any](c echo.Context, items []T) ([]T, error) {
	offset, limit := 0, -1
	for name, dst := range map[string]*int{"offset": &offset, "limit": &limit} {
		raw := c.QueryParam(name)
		if raw == "" {
			continue
		}
		n, err := strconv.Atoi(raw)
		if err != nil || n < -1 || (name == "offset" && n < 0) {
			return nil, apiErr(http.StatusUnprocessableEntity, CodeInvalidVersion, "%s=%q is not a valid %s; use a non-negative integer", name, raw, name)
		}
		*dst = n
	}
	if offset >= len(items) {
		return items[:0], nil
	}
	items = items[offset:]
	if limit >= 0 && limit < len(items) {
		items = items[:limit]
	}
	return items, nil
}

// listSchemas is GET /schemas: every version of every subject, filtered by
// subjectPrefix, deleted and latestOnly, paged by offset and limit.
func (s *Server) listSchemas(c echo.Context) error {
	vs, err := s.cfg.Store.AllVersions(c.Request().Context(), c.QueryParam("subjectPrefix"), boolQuery(c, "deleted"))
	if err != nil {
		return storeErr(err, "", "")
	}
	visible := vs[:0]
	for _, v := range vs {
		if readable(c, v.Subject) {
			visible = append(visible, v)
		}
	}
	vs = visible
	if boolQuery(c, "latestOnly") {
		latest := vs[:0]
		for i, v := range vs {
			if i+1 == len(vs) || vs[i+1].Subject != v.Subject {
				latest = append(latest, v)
			}
		}
		vs = latest
	}
	out := make([]versionResponse, len(vs))
	for i, v := range vs {
		out[i] = versionResponse{Subject: v.Subject, Version: v.Version, ID: v.Schema.ID, SchemaType: schema.Type,
			References: v.Schema.References, Metadata: rawJSON(v.Schema.Metadata), RuleSet: rawJSON(v.Schema.RuleSet),
			Schema: schemaText(c, v.Schema)}
	}
	page, err := paginate(c, out)
	if err != nil {
		return err
	}
	return reply(c, http.StatusOK, page)
}
