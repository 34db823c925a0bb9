// Package access decides who may do what in the schema registry: it
// authenticates a request (HTTP Basic, bearer tokens, OIDC/JWT verified
// offline against a JWKS file, mTLS client certificates), grants roles
// (reader, writer, admin) per subject prefix and per schema context, and
// limits each principal's request rate.
//
// The rules come from an access file (see LoadFile and docs/registry-security.md),
// reloaded without a restart when it or a file it names changes. One Guard
// serves the REST API and the web console alike, so both answer the same
// request the same way.
package access

import (
	"context"
	"fmt"
	"strings"

	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// Role is what a principal may do with the subjects a grant covers. Each
// role includes the ones below it.
type Role int

// The roles, weakest first.
const (
	// None may do nothing.
	None Role = iota
	// Reader may read subjects, versions, schemas, config and mode, look
	// schemas up and check compatibility.
	Reader
	// Writer may also register new versions.
	Writer
	// Admin may also delete, and change compatibility levels and modes;
	// an admin of every subject of a context may change its global
	// config and mode.
	Admin
)

// String is the role's name as the access file spells it.
func (r Role) String() string {
	switch r {
	case Reader:
		return "reader"
	case Writer:
		return "writer"
	case Admin:
		return "admin"
	}
	return "none"
}

// ParseRole reads a role's name.
func ParseRole(s string) (Role, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "":
		return None, nil
	case "reader":
		return Reader, nil
	case "writer":
		return Writer, nil
	case "admin":
		return Admin, nil
	}
	return None, fmt.Errorf("unknown role %q: use reader, writer, admin or none", s)
}

// Method is how a principal authenticated.
type Method string

// The authentication methods.
const (
	MethodAnonymous Method = "anonymous"
	MethodBasic     Method = "basic"
	MethodBearer    Method = "bearer"
	MethodJWT       Method = "jwt"
	MethodMTLS      Method = "mtls"
)

// Principal is who sent a request. Its ID names its kind: "user:alice"
// (HTTP Basic), "token:deploy-bot" (a bearer token), "jwt:<sub>" (an
// OIDC token), "cert:<common name>" (a client certificate), or
// "anonymous".
type Principal struct {
	ID     string
	Method Method
	// Groups are the JWT's groups, as "group:<name>".
	Groups []string
	// grants are the grants that name the principal or one of its groups.
	grants []grant
}

// Anonymous is the principal of a request without credentials.
const Anonymous = "anonymous"

// Can reports whether p holds at least role for subject, which may be
// qualified with a context (":.ctx:name"). A subject with an empty name
// (":.ctx:") stands for the whole context, which only a grant without
// subject prefixes covers.
func (p *Principal) Can(role Role, subject string) bool {
	if role == None {
		return true
	}
	ctx, name := subjectref.Split(subject)
	for _, g := range p.grants {
		if g.role >= role && g.covers(ctx, name) {
			return true
		}
	}
	return false
}

// CanGlobal reports whether p holds role for every subject of the default
// context: what changing the registry's global config or mode needs.
func (p *Principal) CanGlobal(role Role) bool { return p.Can(role, ":"+subjectref.DefaultContext+":") }

// CanAny reports whether p holds role for at least one subject anywhere:
// what listing (with the list then filtered) and reading the global
// config need.
func (p *Principal) CanAny(role Role) bool {
	for _, g := range p.grants {
		if g.role >= role {
			return true
		}
	}
	return false
}

// CanAll reports whether p holds role for every subject of every
// context.
func (p *Principal) CanAll(role Role) bool {
	for _, g := range p.grants {
		if g.role >= role && len(g.prefixes) == 0 && len(g.contexts) == 0 {
			return true
		}
	}
	return false
}

// CanContext reports whether p holds role for some subject of context ctx.
func (p *Principal) CanContext(role Role, ctx string) bool {
	for _, g := range p.grants {
		if g.role >= role && g.inContext(ctx) {
			return true
		}
	}
	return false
}

// grant is one compiled line of the access file's grants.
type grant struct {
	role     Role
	prefixes []string // subject-name prefixes; none: every subject
	contexts []string // contexts; none: every context
}

func (g grant) inContext(ctx string) bool {
	if len(g.contexts) == 0 {
		return true
	}
	for _, c := range g.contexts {
		if c == ctx {
			return true
		}
	}
	return false
}

func (g grant) covers(ctx, name string) bool {
	if !g.inContext(ctx) {
		return false
	}
	if len(g.prefixes) == 0 {
		return true
	}
	if name == "" {
		return false
	}
	for _, p := range g.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal ctx carries, or nil when the request
// was not admitted by a Guard.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// Everyone is the principal of a registry with no access rules: every
// request may do everything, as before access rules existed.
func Everyone() *Principal {
	return &Principal{ID: Anonymous, Method: MethodAnonymous, grants: []grant{{role: Admin}}}
}
