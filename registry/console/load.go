package console

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/store"
)

// parsedKey caches a compiled stored schema per subject: the file name a
// schema compiles as depends on the subject.
type parsedKey struct {
	subject string
	id      int64
}

// compile turns a stored schema into the contract model, resolving its
// references from the store, as the registry compiled it when it was
// registered. Stored schemas never change, so results are cached.
func (c *Console) compile(ctx context.Context, subject string, sc store.Schema) (*schema.Parsed, error) {
	key := parsedKey{subject, sc.ID}
	c.mu.Lock()
	p, ok := c.parsed[key]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := schema.Parse(ctx, api.FileName(subject), sc.Text, sc.References, c.reference)
	if err != nil {
		return nil, fmt.Errorf("schema %d of %s does not compile: %w", sc.ID, subject, err)
	}
	c.mu.Lock()
	c.parsed[key] = p
	c.mu.Unlock()
	return p, nil
}

// reference is the schema.Fetcher over the store. Pinned versions resolve
// even when soft-deleted, as in the registry.
func (c *Console) reference(ctx context.Context, subject string, version int) (string, []store.Reference, error) {
	v, err := c.cfg.Store.Version(ctx, subject, version, version != store.Latest)
	if err != nil {
		return "", nil, fmt.Errorf("reference %s version %d: %w", subject, version, err)
	}
	return v.Schema.Text, v.Schema.References, nil
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
		return store.Latest, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("version %q is not a positive number or \"latest\"", raw)
	}
	return n, nil
}
