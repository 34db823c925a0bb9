package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// Modes, as in Confluent's registry: READONLY refuses registrations and
// deletes, IMPORT registers schemas under the ids and versions the request
// gives (copying another registry) and skips compatibility checks.
const (
	ModeReadWrite = "READWRITE"
	ModeReadOnly  = "READONLY"
	ModeImport    = "IMPORT"
)

// Confluent's codes for modes.
const (
	CodeModeNotFound        = 40409
	CodeInvalidMode         = 42204
	CodeOperationNotAllowed = 42205
	CodeInvalidSubject      = 42208
)

type modeBody struct {
	Mode string `json:"mode"`
}

// mode is the mode in force for subject: its own, else its context's,
// else the global one, else READWRITE. It is read from the store on every
// request, so that instances sharing a store agree.
func (s *Server) mode(ctx context.Context, subject string) (string, error) {
	for _, key := range scopes(subject) {
		m, err := s.cfg.Store.Mode(ctx, key)
		if errors.Is(err, store.ErrConfigNotFound) {
			continue
		}
		return m, err
	}
	return ModeReadWrite, nil
}

// writable refuses a change to subject in READONLY mode.
func (s *Server) writable(ctx context.Context, subject string) (string, error) {
	m, err := s.mode(ctx, subject)
	if err != nil {
		return "", storeErr(err, subject, "")
	}
	if m == ModeReadOnly {
		return m, apiErr(http.StatusUnprocessableEntity, CodeOperationNotAllowed,
			"Subject %s is in read-only mode; PUT /mode/{subject} or /mode {\"mode\": \"READWRITE\"} first", quoteSubject(subject))
	}
	return m, nil
}

// scopes lists where a subject's level or mode is looked for, in order:
// the subject, then for a subject of a context other than the default one
// the context (set as /config/:.ctx: or /mode/:.ctx:, as in Confluent),
// then the registry's global setting.
func scopes(subject string) []string {
	if subject == store.GlobalSubject {
		return []string{subject}
	}
	out := []string{subject}
	if ctx, name := subjectref.Split(subject); ctx != subjectref.DefaultContext && name != "" {
		out = append(out, ":"+ctx+":")
	}
	return append(out, store.GlobalSubject)
}

func quoteSubject(s string) string {
	if s == store.GlobalSubject {
		return "(global)"
	}
	return "'" + s + "'"
}

func (s *Server) getMode(c echo.Context) error {
	subject := store.GlobalSubject
	if c.Param("subject") != "" {
		var err error
		if subject, err = subjectParam(c); err != nil {
			return err
		}
		m, err := s.cfg.Store.Mode(c.Request().Context(), subject)
		if errors.Is(err, store.ErrConfigNotFound) && !boolQuery(c, "defaultToGlobal") {
			return apiErr(http.StatusNotFound, CodeModeNotFound, "Subject '%s' does not have subject-level mode configured", subject)
		}
		if err == nil {
			return reply(c, http.StatusOK, modeBody{m})
		}
		if !errors.Is(err, store.ErrConfigNotFound) {
			return storeErr(err, subject, "")
		}
	}
	// The mode in force: the context's, the global one or READWRITE.
	m, err := s.mode(c.Request().Context(), subject)
	if err != nil {
		return storeErr(err, "", "")
	}
	return reply(c, http.StatusOK, modeBody{m})
}

func (s *Server) putMode(c echo.Context) error {
	subject := store.GlobalSubject
	if c.Param("subject") != "" {
		var err error
		if subject, err = subjectParam(c); err != nil {
			return err
		}
	}
	var req modeBody
	if err := decode(c, &req); err != nil {
		return err
	}
	if !slices.Contains([]string{ModeReadWrite, ModeReadOnly, ModeImport}, req.Mode) {
		return apiErr(http.StatusUnprocessableEntity, CodeInvalidMode,
			"Invalid mode %q: use READWRITE, READONLY or IMPORT", req.Mode)
	}
	ctx := c.Request().Context()
	if req.Mode == ModeImport && !boolQuery(c, "force") {
		// Importing keeps the source registry's ids, which must not
		// collide with schemas already here.
		var err error
		var subs []string
		if subject == store.GlobalSubject {
			subs, err = s.cfg.Store.Subjects(ctx, true)
		} else if _, verr := s.cfg.Store.Versions(ctx, subject, true); verr == nil {
			subs = []string{subject}
		} else if !errors.Is(verr, store.ErrSubjectNotFound) {
			err = verr
		}
		if err != nil {
			return storeErr(err, subject, "")
		}
		if len(subs) > 0 {
			return apiErr(http.StatusUnprocessableEntity, CodeOperationNotAllowed,
				"Cannot import since found existing subjects (%d); import into an empty registry or subject, or pass force=true", len(subs))
		}
	}
	if err := s.cfg.Store.SetMode(ctx, subject, req.Mode); err != nil {
		return storeErr(err, subject, "")
	}
	return reply(c, http.StatusOK, req)
}

func (s *Server) deleteMode(c echo.Context) error {
	subject, err := subjectParam(c)
	if err != nil {
		return err
	}
	prev, err := s.cfg.Store.DeleteMode(c.Request().Context(), subject)
	if errors.Is(err, store.ErrConfigNotFound) {
		return apiErr(http.StatusNotFound, CodeModeNotFound, "Subject '%s' does not have subject-level mode configured", subject)
	}
	if err != nil {
		return storeErr(err, subject, "")
	}
	return reply(c, http.StatusOK, modeBody{prev})
}

// MaxSubjectLength bounds subject names, in bytes.
const MaxSubjectLength = 255

// validSubject refuses, with Confluent's 42208, subject names a client could
// not list and address again, or that this registry would misread:
// invalid UTF-8, control characters (NUL, newlines), names over
// MaxSubjectLength bytes, and a schema context (":.ctx:subject") without
// its closing colon or a subject name after it.
func validSubject(subject string) error {
	bad := func(why string) error {
		return apiErr(http.StatusUnprocessableEntity, CodeInvalidSubject, "Invalid subject %.80q: %s", subject, why)
	}
	switch {
	case !utf8.ValidString(subject):
		return bad("not valid UTF-8")
	case len(subject) > MaxSubjectLength:
		return bad(fmt.Sprintf("longer than %d bytes", MaxSubjectLength))
	case strings.IndexFunc(subject, unicode.IsControl) >= 0:
		return bad("contains a control character")
	case strings.HasPrefix(subject, ":.") && !strings.Contains(subject[2:], ":"):
		return bad("a schema context is written \":.context:subject\", with a colon after the context")
	}
	if _, name := subjectref.Split(subject); name == "" {
		return bad("a qualified subject \":.context:subject\" needs a subject name after the context")
	}
	return nil
}
