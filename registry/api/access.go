package api

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/msgcontract/msgcontract/registry/access"
)

// scope is what a route's required role applies to.
type scope int

const (
	// open routes answer anyone: discovery, health.
	open scope = iota
	// subjectScope needs the role for the path's subject.
	subjectScope
	// globalScope needs the role for every subject of the default
	// context: global config and mode changes.
	globalScope
	// anyScope needs the role for some subject; listings are then
	// filtered to what the principal may read.
	anyScope
	// schemaIDScope needs the role for some subject holding the path's
	// schema id.
	schemaIDScope
)

// need is what one route requires.
type need struct {
	role  access.Role
	scope scope
	// what the route does, as a denial says it.
	what string
}

// Needs is the access rule of every route, keyed "METHOD /path/:param"
// as echo names routes; TestEveryRouteHasANeed keeps it complete. It is
// the one place that says which role each endpoint needs.
var needs = map[string]need{
	"GET /":                         {access.None, open, ""},
	"GET /openapi.json":             {access.None, open, ""},
	"GET /schemas/types":            {access.None, open, ""},
	"GET /subjects":                 {access.Reader, anyScope, "list subjects"},
	"GET /schemas":                  {access.Reader, anyScope, "list schemas"},
	"GET /contexts":                 {access.Reader, anyScope, "list contexts"},
	"GET /config":                   {access.Reader, anyScope, "read the global config"},
	"GET /mode":                     {access.Reader, anyScope, "read the global mode"},
	"PUT /config":                   {access.Admin, globalScope, "change the global config"},
	"DELETE /config":                {access.Admin, globalScope, "delete the global config"},
	"PUT /mode":                     {access.Admin, globalScope, "change the global mode"},
	"GET /schemas/ids/:id":          {access.Reader, schemaIDScope, "read schema"},
	"GET /schemas/ids/:id/schema":   {access.Reader, schemaIDScope, "read schema"},
	"GET /schemas/ids/:id/versions": {access.Reader, schemaIDScope, "read schema"},
	"GET /schemas/ids/:id/subjects": {access.Reader, schemaIDScope, "read schema"},

	"GET /subjects/:subject/versions":                         {access.Reader, subjectScope, "read subject"},
	"GET /subjects/:subject/versions/:version":                {access.Reader, subjectScope, "read subject"},
	"GET /subjects/:subject/versions/:version/schema":         {access.Reader, subjectScope, "read subject"},
	"GET /subjects/:subject/versions/:version/referencedby":   {access.Reader, subjectScope, "read subject"},
	"POST /subjects/:subject":                                 {access.Reader, subjectScope, "look up a schema in subject"},
	"POST /compatibility/subjects/:subject/versions/:version": {access.Reader, subjectScope, "check compatibility in subject"},
	"POST /compatibility/subjects/:subject/versions":          {access.Reader, subjectScope, "check compatibility in subject"},
	"GET /config/:subject":                                    {access.Reader, subjectScope, "read the config of subject"},
	"GET /mode/:subject":                                      {access.Reader, subjectScope, "read the mode of subject"},

	"POST /subjects/:subject/versions":            {access.Writer, subjectScope, "register a version in subject"},
	"DELETE /subjects/:subject":                   {access.Admin, subjectScope, "delete subject"},
	"DELETE /subjects/:subject/versions/:version": {access.Admin, subjectScope, "delete a version of subject"},
	"PUT /config/:subject":                        {access.Admin, subjectScope, "change the config of subject"},
	"DELETE /config/:subject":                     {access.Admin, subjectScope, "delete the config of subject"},
	"PUT /mode/:subject":                          {access.Admin, subjectScope, "change the mode of subject"},
	"DELETE /mode/:subject":                       {access.Admin, subjectScope, "delete the mode of subject"},
}

// authorize admits the request through the guard (unless the console's
// guard already did), checks the route's need and records who asks in
// the context the store's audit log reads.
func (s *Server) authorize(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r, d := s.guard.Admit(c.Request())
		if d != nil {
			return denial(d)
		}
		p := access.FromContext(r.Context())
		c.SetRequest(withActor(r, p))
		n, ok := needs[c.Request().Method+" "+c.Path()]
		if !ok {
			// Unknown routes (404, 405) reveal nothing.
			return next(c)
		}
		if err := s.check(c, p, n); err != nil {
			return err
		}
		return next(c)
	}
}

func (s *Server) check(c echo.Context, p *access.Principal, n need) error {
	allowed := true
	what := n.what
	switch n.scope {
	case open:
	case anyScope:
		allowed = p.CanAny(n.role)
	case globalScope:
		allowed = p.CanGlobal(n.role)
	case subjectScope:
		subject, err := subjectParam(c)
		if err != nil {
			return err
		}
		allowed = p.Can(n.role, subject)
		what += " " + strconv.Quote(subject)
	case schemaIDScope:
		allowed = p.CanAll(n.role)
		if !allowed {
			id, err := idParam(c)
			if err != nil {
				return err
			}
			svs, err := s.cfg.Store.SubjectVersionsByID(c.Request().Context(), id, true)
			if err != nil {
				return storeErr(err, "", "")
			}
			// An id no subject holds is answered 404 by the handler to
			// anyone who may read something.
			allowed = len(svs) == 0 && p.CanAny(n.role)
			for _, sv := range svs {
				allowed = allowed || p.Can(n.role, sv.Subject)
			}
			what += " " + c.Param("id")
		}
	}
	if allowed {
		return nil
	}
	return denial(access.Deny(p, n.role, what))
}

// denial turns the guard's refusal into the API's error.
func denial(d *access.Denial) *Error {
	return &Error{Status: d.Status, Code: d.Code, Msg: d.Message, retryAfter: d.RetryAfter, challenge: d.Status == http.StatusUnauthorized}
}

// readable reports whether the request's principal may read subject, for
// filtering listings.
func readable(c echo.Context, subject string) bool {
	p := access.FromContext(c.Request().Context())
	return p == nil || p.Can(access.Reader, subject)
}

// readableContext reports whether the request's principal may read some
// subject of ctx.
func readableContext(c echo.Context, ctx string) bool {
	p := access.FromContext(c.Request().Context())
	return p == nil || p.CanContext(access.Reader, ctx)
}
