package api

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/store"
)

type levelResponse struct {
	Level compat.Level `json:"compatibilityLevel"`
}

type levelRequest struct {
	Compatibility string `json:"compatibility"`
}

func (s *Server) getGlobalConfig(c echo.Context) error {
	l, err := s.level(c.Request().Context(), store.GlobalSubject)
	if err != nil {
		return storeErr(err, "", "")
	}
	return reply(c, http.StatusOK, levelResponse{l})
}

func (s *Server) getSubjectConfig(c echo.Context) error {
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	raw, err := s.cfg.Store.Config(c.Request().Context(), subject)
	if errors.Is(err, store.ErrConfigNotFound) && boolQuery(c, "defaultToGlobal") {
		// The level in force: the context's, the global one or the default.
		l, err := s.level(c.Request().Context(), subject)
		if err != nil {
			return storeErr(err, subject, "")
		}
		return reply(c, http.StatusOK, levelResponse{l})
	}
	if err != nil {
		return storeErr(err, subject, "")
	}
	l, err := compat.ParseLevel(raw)
	if err != nil {
		return storeErr(err, subject, "")
	}
	return reply(c, http.StatusOK, levelResponse{l})
}

func (s *Server) putConfig(c echo.Context, subject string) error {
	var req levelRequest
	if err := decode(c, &req); err != nil {
		return err
	}
	l, err := compat.ParseLevel(req.Compatibility)
	if err != nil {
		return apiErr(http.StatusUnprocessableEntity, CodeInvalidLevel, "Invalid compatibility level: %v", err)
	}
	if err := s.cfg.Store.SetConfig(c.Request().Context(), subject, string(l)); err != nil {
		return storeErr(err, subject, "")
	}
	return reply(c, http.StatusOK, levelRequest{string(l)})
}

func (s *Server) putGlobalConfig(c echo.Context) error { return s.putConfig(c, store.GlobalSubject) }

func (s *Server) putSubjectConfig(c echo.Context) error {
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	return s.putConfig(c, subject)
}

func (s *Server) deleteGlobalConfig(c echo.Context) error {
	prev, err := s.cfg.Store.DeleteConfig(c.Request().Context(), store.GlobalSubject)
	if errors.Is(err, store.ErrConfigNotFound) {
		prev, err = string(s.cfg.DefaultLevel), nil
	}
	if err != nil {
		return storeErr(err, "", "")
	}
	return reply(c, http.StatusOK, levelResponse{compat.Level(prev)})
}

func (s *Server) deleteSubjectConfig(c echo.Context) error {
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	prev, err := s.cfg.Store.DeleteConfig(c.Request().Context(), subject)
	if err != nil {
		return storeErr(err, subject, "")
	}
	return reply(c, http.StatusOK, levelResponse{compat.Level(prev)})
}
