package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/msgcontract/msgcontract/registry/access"
)

// The console's access rules mirror the API's (registry/api's needs
// table): pages need the reader role, for the subject they show or, for
// the lists, for some subject (the lists then show only readable ones);
// registering needs writer on the subject. Dead letters belong to no one
// subject: listing them needs reader of every subject, replaying or
// purging them admin of every subject.

// subjectOf reads the subject a request is about: ?s= on pages, the
// subject field on the check and register forms.
func subjectOf(r *http.Request) string {
	if r.Method == http.MethodPost {
		return strings.TrimSpace(r.PostFormValue("subject"))
	}
	return r.URL.Query().Get("s")
}

// scope is what a console route's role applies to.
type scope int

const (
	anySubject  scope = iota // some subject (lists, the empty check form)
	theSubject               // the subject the request names
	allSubjects              // every subject (dead letters)
)

// principal is who sends r: the principal the registry's guard admitted,
// or, for a console served on its own, the guard's verdict now.
func (c *Console) principal(r *http.Request) (*access.Principal, *access.Denial) {
	if p := access.FromContext(r.Context()); p != nil {
		return p, nil
	}
	r2, d := c.guard.Admit(r)
	if d != nil {
		return nil, d
	}
	return access.FromContext(r2.Context()), nil
}

// need wraps h so that it runs only for a principal with role over the
// scope; others get a 401 page that makes the browser ask for
// credentials, or a 403 page.
func (c *Console) need(role access.Role, sc scope, what string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, d := c.principal(r)
		if d != nil {
			c.deny(w, r, d)
			return
		}
		ok := false
		switch sc {
		case anySubject:
			ok = p.CanAny(role)
		case theSubject:
			s := subjectOf(r)
			ok = (s == "" && p.CanAny(role)) || (s != "" && p.Can(role, s))
		case allSubjects:
			ok = p.CanAll(role)
		}
		if !ok {
			c.deny(w, r, access.Deny(p, role, what))
			return
		}
		h(w, r.WithContext(access.WithPrincipal(r.Context(), p)))
	}
}

// deny renders a refusal as a page; a 401 carries the challenges, so a
// browser asks for a user name and password.
func (c *Console) deny(w http.ResponseWriter, r *http.Request, d *access.Denial) {
	if d.Status == http.StatusUnauthorized {
		access.Challenge(w.Header())
	}
	if d.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(d.RetryAfter))
	}
	c.fail(w, r, d.Status, "%s", d.Message)
}

// actor is the principal a form's write is made as: the one who sent it,
// or the holder of the token typed into the form (when the registry runs
// on --token-file, whose token browsers do not send by themselves). ok
// is false when a typed token does not authenticate; why says so.
func (c *Console) actor(r *http.Request) (p *access.Principal, why string) {
	if typed := strings.TrimSpace(r.PostFormValue("token")); typed != "" {
		tp, d := c.guard.Bearer(typed, r.RemoteAddr)
		if d != nil {
			return nil, "the token is wrong: " + d.Message
		}
		return tp, ""
	}
	p, d := c.principal(r)
	if d != nil {
		return nil, d.Message
	}
	return p, ""
}

// mayWrite reports whether p holds role for what a form changes, and the
// message to show when not.
func (c *Console) mayWrite(p *access.Principal, role access.Role, subject, what string) (bool, string) {
	ok := p.CanAll(role)
	if subject != "" {
		ok = p.Can(role, subject)
	}
	if ok {
		return true, ""
	}
	if c.cfg.Token != "" && p.ID == access.Anonymous {
		return false, what + " needs the registry's token (the first line of the server's --token-file)"
	}
	return false, access.Deny(p, role, what).Message
}

// denyStatus is 401 for an anonymous writer, who should authenticate,
// and 403 for anyone else.
func denyStatus(p *access.Principal) int {
	if p.ID == access.Anonymous {
		return http.StatusUnauthorized
	}
	return http.StatusForbidden
}
