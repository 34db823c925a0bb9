package console

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// compiler is what the console uses of the API when it is an
// *api.Server: its one bounded cache of compiled stored schemas, and its
// bounded compilation of schemas clients send.
type compiler interface {
	Compiled(ctx context.Context, subject string, sc store.Schema) (*schema.Parsed, error)
	CompileRequest(ctx context.Context, subject, text string, refs []subjectref.Reference) (*schema.Parsed, error)
}

// compile turns a stored schema into the contract model, resolving its
// references from the store, as the registry compiled it when it was
// registered, through the API server's cache when the API is one.
func (c *Console) compile(ctx context.Context, subject string, sc store.Schema) (*schema.Parsed, error) {
	var p *schema.Parsed
	var err error
	if srv, ok := c.cfg.API.(compiler); ok {
		p, err = srv.Compiled(ctx, subject, sc)
	} else {
		p, err = schema.Parse(ctx, subjectref.FileName(subject), sc.Text, subjectref.InContext(subject, sc.References), c.reference)
	}
	if err != nil {
		return nil, fmt.Errorf("schema %d of %s does not compile: %w", sc.ID, subject, err)
	}
	return p, nil
}

// compileSent compiles a schema pasted into a form, bounded by the API
// server's compile gate and workers when the API is one.
func (c *Console) compileSent(ctx context.Context, subject, text string, refs []subjectref.Reference) (*schema.Parsed, error) {
	if srv, ok := c.cfg.API.(compiler); ok {
		return srv.CompileRequest(ctx, subject, text, refs)
	}
	return schema.Parse(ctx, subjectref.FileName(subject), text, subjectref.InContext(subject, refs), c.reference)
}

// reference is the schema.Fetcher over the store. Pinned versions resolve
// even when soft-deleted, as in the registry.
func (c *Console) reference(ctx context.Context, subject string, version int) (string, []subjectref.Reference, error) {
	v, err := c.cfg.Store.Version(ctx, subject, version, version != subjectref.Latest)
	if err != nil {
		return "", nil, fmt.Errorf("reference %s version %d: %w", subject, version, err)
	}
	return v.Schema.Text, subjectref.InContext(v.Subject, v.Schema.References), nil
}

// levelOf is a subject's effective level and where it comes from:
// "subject", "global" or "default".
func (c *Console) levelOf(ctx context.Context, subject string) (compat.Level, string, error) {
	for _, k := range []struct{ key, from string }{{subject, "subject"}, {store.GlobalSubject, "global"}} {
		raw, err := c.cfg.Store.Config(ctx, k.key)
		if errors.Is(err, store.ErrConfigNotFound) {
			continue
		}
		if err != nil {
			return "", "", err
		}
		l, err := compat.ParseLevel(raw)
		return l, k.from, err
	}
	return c.cfg.DefaultLevel, "default", nil
}

// versionArg reads a version number or "latest" from a query value.
func versionArg(raw string) (int, error) {
	if raw == "" || raw == "latest" {
		return subjectref.Latest, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("version %q is not a positive number or \"latest\"", raw)
	}
	return n, nil
}
