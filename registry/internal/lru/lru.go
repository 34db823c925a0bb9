// Package lru is a small least-recently-used cache, safe for concurrent
// use, for the registry's caches of immutable things: compiled stored
// schemas, compiled request schemas, pairwise check results.
package lru

import (
	"container/list"
	"sync"
)

// Cache keeps at most max values; the least recently used go first.
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *entry[K, V], most recent first
	byKey map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key K
	val V
}

// New returns a Cache of at most max values.
func New[K comparable, V any](max int) *Cache[K, V] {
	return &Cache[K, V]{max: max, order: list.New(), byKey: map[K]*list.Element{}}
}

// Get returns the value of k, if kept, and marks it used.
func (c *Cache[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*entry[K, V]).val, true
}

// Put keeps v as k's value unless k has one (values never change), and
// drops the least recently used beyond max.
func (c *Cache[K, V]) Put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[k]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.byKey[k] = c.order.PushFront(&entry[K, V]{k, v})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*entry[K, V]).key)
	}
}

// Len is the number of values kept.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
