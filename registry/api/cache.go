package api

import (
	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/internal/lru"
	"github.com/msgcontract/msgcontract/registry/schema"
)

// parsedKey caches a compiled schema per subject: one id registered under
// two subjects compiles under two file names.
type parsedKey struct {
	subject string
	id      int64
}

// parsedCache keeps the most recently used compiled stored schemas, up to
// a fixed number, so that memory does not grow with the registry: a store
// of 100,000 schemas would otherwise keep every one compiled. Stored
// schemas are immutable, so an entry never goes stale; one evicted is
// compiled again when next needed.
type parsedCache = lru.Cache[parsedKey, *compiled]

// compiled is a stored schema compiled once, with its form prepared for
// the compatibility checker, so a transitive check against a long history
// neither recompiles nor re-indexes any stored version.
type compiled struct {
	p    *schema.Parsed
	prep *compat.Schema
}

func newParsedCache(max int) *parsedCache { return lru.New[parsedKey, *compiled](max) }
