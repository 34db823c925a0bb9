package api

import (
	"container/list"
	"sync"

	"github.com/msgcontract/msgcontract/registry/compat"
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
type parsedCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *parsedEntry, most recent first
	byKey map[parsedKey]*list.Element
}

type parsedEntry struct {
	key parsedKey
	c   *compiled
}

// compiled is a stored schema compiled once, with its form prepared for
// the compatibility checker, so a transitive check against a long history
// neither recompiles nor re-indexes any stored version.
type compiled struct {
	p    *schema.Parsed
	prep *compat.Schema
}

func newParsedCache(max int) *parsedCache {
	return &parsedCache{max: max, order: list.New(), byKey: map[parsedKey]*list.Element{}}
}

func (c *parsedCache) get(k parsedKey) (*compiled, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*parsedEntry).c, true
}

func (c *parsedCache) put(k parsedKey, p *compiled) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.byKey[k] = c.order.PushFront(&parsedEntry{k, p})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*parsedEntry).key)
	}
}
