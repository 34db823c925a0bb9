package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
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
	SchemaType string            `json:"schemaType"`
	References []store.Reference `json:"references,omitempty"`
	Schema     string            `json:"schema"`
}

func (s *Server) getSchemaByID(c echo.Context) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	key := c.QueryParam("format") + ":" + c.Param("id")
	if b, ok := s.byID.Load(key); ok {
		return c.Blob(http.StatusOK, ContentType, b.([]byte))
	}
	sc, err := s.cfg.Store.SchemaByID(c.Request().Context(), id)
	if err != nil {
		return storeErr(err, "", "")
	}
	b, err := json.Marshal(schemaResponse{SchemaType: schema.Type, References: sc.References, Schema: schemaText(c, sc)})
	if err != nil {
		return err
	}
	if !s.cfg.Store.Shared() {
		// Another instance may delete the id permanently; only a store
		// this process alone writes may answer from memory.
		s.byID.Store(key, b)
	}
	return c.Blob(http.StatusOK, ContentType, b)
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
	svs, err := s.cfg.Store.SubjectVersionsByID(c.Request().Context(), id)
	if err != nil {
		return storeErr(err, "", "")
	}
	return reply(c, http.StatusOK, svs)
}

func (s *Server) getSchemaSubjects(c echo.Context) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	svs, err := s.cfg.Store.SubjectVersionsByID(c.Request().Context(), id)
	if err != nil {
		return storeErr(err, "", "")
	}
	subjects := []string{}
	for _, sv := range svs {
		if len(subjects) == 0 || subjects[len(subjects)-1] != sv.Subject {
			subjects = append(subjects, sv.Subject)
		}
	}
	return reply(c, http.StatusOK, subjects)
}
