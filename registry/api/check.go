package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/store"
)

// compatResponse is Confluent's compatibility answer; messages are listed
// with verbose=true.
type compatResponse struct {
	IsCompatible bool     `json:"is_compatible"`
	Messages     []string `json:"messages,omitempty"`
}

func (s *Server) answer(c echo.Context, vs []compat.Violation) error {
	resp := compatResponse{IsCompatible: len(vs) == 0}
	if boolQuery(c, "verbose") {
		resp.Messages = lines(vs)
		if resp.Messages == nil {
			resp.Messages = []string{}
		}
	}
	return reply(c, http.StatusOK, resp)
}

// checkOne checks a schema against one version, at the subject's level's
// directions.
func (s *Server) checkOne(c echo.Context) error {
	ctx := c.Request().Context()
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	n, err := versionParam(c)
	if err != nil {
		return err
	}
	req, err := s.readSchemaRequest(c)
	if err != nil {
		return err
	}
	v, err := s.cfg.Store.Version(ctx, subject, n, false)
	if err != nil {
		return storeErr(err, subject, c.Param("version"))
	}
	p, err := s.parseRequest(ctx, s.gate, subject, &req)
	if err != nil {
		return err
	}
	level, err := s.level(ctx, subject)
	if err != nil {
		return storeErr(err, subject, "")
	}
	// One version: the level's directions, never transitive.
	single := map[compat.Level]compat.Level{
		compat.BackwardTransitive: compat.Backward, compat.ForwardTransitive: compat.Forward, compat.FullTransitive: compat.Full,
	}
	if l, ok := single[level]; ok {
		level = l
	}
	vs, err := s.violations(ctx, subject, level, []store.Version{v}, p)
	if err != nil {
		return storeErr(err, subject, "")
	}
	return s.answer(c, vs)
}

// checkAll checks a schema as registering it would: against the latest
// version, or every version for a _TRANSITIVE level.
func (s *Server) checkAll(c echo.Context) error {
	ctx := c.Request().Context()
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	req, err := s.readSchemaRequest(c)
	if err != nil {
		return err
	}
	p, err := s.parseRequest(ctx, s.gate, subject, &req)
	if err != nil {
		return err
	}
	live, err := s.cfg.Store.Versions(ctx, subject, false)
	if err != nil && !errors.Is(err, store.ErrSubjectNotFound) {
		return storeErr(err, subject, "")
	}
	level, err := s.level(ctx, subject)
	if err != nil {
		return storeErr(err, subject, "")
	}
	vs, err := s.violations(ctx, subject, level, live, p)
	if err != nil {
		return storeErr(err, subject, "")
	}
	return s.answer(c, vs)
}
