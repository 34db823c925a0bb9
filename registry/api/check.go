package api

import (
	"errors"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
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
		// Every violation against every version it breaks, as Confluent's
		// verbose answer lists them (the 409 of a registration names each
		// violation once, against the newest version it breaks).
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
	missing := errors.Is(err, store.ErrSubjectNotFound) || errors.Is(err, store.ErrVersionNotFound)
	switch {
	case missing && n != subjectref.Latest:
		// As Confluent: a numbered version that does not exist is 40402,
		// whether or not its subject does.
		return apiErr(http.StatusNotFound, CodeVersionNotFound, "Version %s not found.", c.Param("version"))
	case err != nil && !missing:
		return storeErr(err, subject, c.Param("version"))
	}
	p, err := s.parseRequest(ctx, s.gate, subject, &req)
	if err != nil {
		return err
	}
	if missing {
		// "latest" of a subject without live versions: nothing to be
		// incompatible with, as in Confluent.
		return s.answer(c, nil)
	}
	level, err := s.level(ctx, subject)
	if err != nil {
		return storeErr(err, subject, "")
	}
	// As Confluent, the one version binds only a schema of its
	// compatibilityGroup (as registering filters the history).
	group, err := s.groupOf(ctx, subject, &req, []store.Version{v})
	if err != nil {
		return storeErr(err, subject, "")
	}
	if !slices.ContainsFunc(group, func(g store.Version) bool { return g.Version == v.Version }) {
		return s.answer(c, nil)
	}
	// One version: the level's directions, never transitive.
	vs, err := s.violations(ctx, subject, nonTransitive(level), []store.Version{v}, p, false)
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
	// The versions' ids suffice while their compiled forms are cached.
	live, err := s.cfg.Store.VersionHeads(ctx, subject)
	if err != nil && !errors.Is(err, store.ErrSubjectNotFound) {
		return storeErr(err, subject, "")
	}
	if live, err = s.groupOf(ctx, subject, &req, live); err != nil {
		return storeErr(err, subject, "")
	}
	level, err := s.level(ctx, subject)
	if err != nil {
		return storeErr(err, subject, "")
	}
	vs, err := s.violations(ctx, subject, level, live, p, boolQuery(c, "verbose"))
	if err != nil {
		return storeErr(err, subject, "")
	}
	return s.answer(c, vs)
}

// nonTransitive is level's directions against a single version.
func nonTransitive(level compat.Level) compat.Level {
	switch level {
	case compat.BackwardTransitive:
		return compat.Backward
	case compat.ForwardTransitive:
		return compat.Forward
	case compat.FullTransitive:
		return compat.Full
	}
	return level
}
