package compat

import (
	"sync/atomic"

	"github.com/msgcontract/msgcontract/registry/internal/lru"
)

// Memo remembers the result of checking a new schema against one stored
// version, keyed by the stored version's id, a fingerprint of the new
// schema and the directions checked, so that a FULL_TRANSITIVE check
// against a long history that a client repeats (a check before a
// registration, a retried deploy, a CI job per commit) compares each pair
// once. Both schemas are immutable, so an entry never goes stale; the
// least recently used go first once it holds max pairs. A Memo is safe
// for concurrent use.
type Memo struct {
	pairs       *lru.Cache[memoKey, []Violation]
	hits, total atomic.Int64
}

// Fingerprint identifies a new schema for a Memo: a hash of everything its
// prepared form depends on (file name, text, references), so that two
// schemas with one fingerprint give the same violations, positions
// included.
type Fingerprint [32]byte

type memoKey struct {
	old  int64
	next Fingerprint
	dirs Direction
}

// NewMemo returns a Memo holding at most max pairs.
func NewMemo(max int) *Memo {
	return &Memo{pairs: lru.New[memoKey, []Violation](max)}
}

// CheckSchemas is the package's CheckSchemas, with ids[i] the id of
// history[i] and next identified by fp: pairs already checked are
// answered from the memo, the others checked and remembered.
func (m *Memo) CheckSchemas(level Level, history []*Schema, ids []int64, next *Schema, fp Fingerprint, opts ...Option) []Violation {
	return checkHistory(level, len(history), func(i int, dirs Direction) []Violation {
		key := memoKey{ids[i], fp, dirs}
		m.total.Add(1)
		if vs, ok := m.pairs.Get(key); ok {
			m.hits.Add(1)
			return vs
		}
		vs := check(history[i], next, dirs)
		m.pairs.Put(key, vs)
		return vs
	}, opts)
}

// Stats returns how many pairs were asked for and how many of them the
// memo answered.
func (m *Memo) Stats() (hits, total int64) { return m.hits.Load(), m.total.Load() }
