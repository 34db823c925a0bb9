package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/datacontract"
	"github.com/msgcontract/msgcontract/registry/store"
)

// CodeInvalidRuleSet is Confluent's error code for an invalid rule set.
const CodeInvalidRuleSet = 42210

// configOf reads the stored config of one scope (a subject, a context as
// ":.ctx:", or store.GlobalSubject).
func configOf(row store.ConfigRow) (datacontract.Config, error) {
	set, err := datacontract.ParseSettings(row.Settings)
	if err != nil {
		return datacontract.Config{}, err
	}
	return datacontract.Full(row.Level, set), nil
}

// effectiveConfig is the config in force for subject: the first of the
// subject's, its context's and the global config that exists, as in
// Confluent, with the level in force (level) filled in when that config
// has none; with no config at all, the default level alone.
func (s *Server) effectiveConfig(ctx context.Context, subject string) (datacontract.Config, error) {
	level, err := s.level(ctx, subject)
	if err != nil {
		return datacontract.Config{}, err
	}
	for _, key := range scopes(subject) {
		row, err := s.cfg.Store.FullConfig(ctx, key)
		if errors.Is(err, store.ErrConfigNotFound) {
			continue
		}
		if err != nil {
			return datacontract.Config{}, err
		}
		c, err := configOf(row)
		if err != nil {
			return datacontract.Config{}, err
		}
		c.CompatibilityLevel = string(level)
		return c, nil
	}
	return datacontract.Config{CompatibilityLevel: string(level)}, nil
}

func (s *Server) getGlobalConfig(c echo.Context) error {
	ctx := c.Request().Context()
	row, err := s.cfg.Store.FullConfig(ctx, store.GlobalSubject)
	if errors.Is(err, store.ErrConfigNotFound) {
		err = nil
	}
	if err != nil {
		return storeErr(err, "", "")
	}
	conf, err := configOf(row)
	if err != nil {
		return storeErr(err, "", "")
	}
	if conf.CompatibilityLevel == "" {
		conf.CompatibilityLevel = string(s.cfg.DefaultLevel)
	}
	return reply(c, http.StatusOK, conf)
}

func (s *Server) getSubjectConfig(c echo.Context) error {
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	row, err := s.cfg.Store.FullConfig(ctx, subject)
	if errors.Is(err, store.ErrConfigNotFound) && boolQuery(c, "defaultToGlobal") {
		// The config in force: the context's, the global one or the default.
		conf, err := s.effectiveConfig(ctx, subject)
		if err != nil {
			return storeErr(err, subject, "")
		}
		return reply(c, http.StatusOK, conf)
	}
	if err != nil {
		return storeErr(err, subject, "")
	}
	conf, err := configOf(row)
	if err != nil {
		return storeErr(err, subject, "")
	}
	if conf.CompatibilityLevel == "" && boolQuery(c, "defaultToGlobal") {
		l, err := s.level(ctx, subject)
		if err != nil {
			return storeErr(err, subject, "")
		}
		conf.CompatibilityLevel = string(l)
	}
	return reply(c, http.StatusOK, conf)
}

// putConfig applies the body to the scope's config: given fields replace
// the stored ones, null removes one, others are kept (as in Confluent),
// and answers the whole config in the update request's form. A config
// left with nothing is removed.
func (s *Server) putConfig(c echo.Context, subject string) error {
	body, err := io.ReadAll(c.Request().Body)
	clearReadDeadline(c)
	if err != nil {
		return decodeErr(err)
	}
	if !json.Valid(body) {
		var v any
		return apiErr(http.StatusBadRequest, CodeInvalidSchema, "the request body is not valid JSON: %v; send e.g. {\"compatibility\": \"FULL\"}", json.Unmarshal(body, &v))
	}
	row, err := s.cfg.Store.UpdateConfig(c.Request().Context(), subject, func(cur store.ConfigRow, _ bool) (store.ConfigRow, error) {
		set, err := datacontract.ParseSettings(cur.Settings)
		if err != nil {
			return store.ConfigRow{}, err
		}
		level, set, err := datacontract.Update(cur.Level, set, body)
		var ue *datacontract.UpdateError
		if errors.As(err, &ue) {
			if ue.RuleSet {
				return store.ConfigRow{}, apiErr(http.StatusUnprocessableEntity, CodeInvalidRuleSet, "Invalid rule set: %s", ue.Msg)
			}
			if ue.Field == "compatibility" {
				return store.ConfigRow{}, apiErr(http.StatusUnprocessableEntity, CodeInvalidLevel, "Invalid compatibility level: %s", ue.Msg)
			}
			return store.ConfigRow{}, apiErr(http.StatusUnprocessableEntity, CodeInvalidLevel, "Invalid config: %s", ue.Msg)
		}
		if err != nil {
			return store.ConfigRow{}, err
		}
		if level != "" {
			l, err := compat.ParseLevel(level)
			if err != nil {
				return store.ConfigRow{}, apiErr(http.StatusUnprocessableEntity, CodeInvalidLevel, "Invalid compatibility level: %v", err)
			}
			level = string(l)
		}
		return store.ConfigRow{Level: level, Settings: set.Encode()}, nil
	})
	if err != nil {
		return storeErr(err, subject, "")
	}
	conf, err := configOf(row)
	if err != nil {
		return storeErr(err, subject, "")
	}
	return reply(c, http.StatusOK, conf.Answer())
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
	prev, err := s.cfg.Store.DeleteFullConfig(c.Request().Context(), store.GlobalSubject)
	if errors.Is(err, store.ErrConfigNotFound) {
		prev, err = store.ConfigRow{Level: string(s.cfg.DefaultLevel)}, nil
	}
	if err != nil {
		return storeErr(err, "", "")
	}
	conf, err := configOf(prev)
	if err != nil {
		return storeErr(err, "", "")
	}
	return reply(c, http.StatusOK, conf)
}

func (s *Server) deleteSubjectConfig(c echo.Context) error {
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	prev, err := s.cfg.Store.DeleteFullConfig(c.Request().Context(), subject)
	if err != nil {
		return storeErr(err, subject, "")
	}
	conf, err := configOf(prev)
	if err != nil {
		return storeErr(err, subject, "")
	}
	return reply(c, http.StatusOK, conf)
}

// decodeErr is the answer to a body that could not be read, as decode
// gives it.
func decodeErr(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return timedOut("the request body did not arrive within the request's time budget: %v", err)
	}
	return apiErr(http.StatusBadRequest, CodeInvalidSchema, "cannot read the request body: %v", err)
}
