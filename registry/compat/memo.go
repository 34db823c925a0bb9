package compat

import (
	"container/list"
	"sync"
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
	mu    sync.Mutex
	max   int
	order *list.List // of *memoEntry, most recent first
	byKey map[memoKey]*list.Element
	hits  int64
	total int64
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

type memoEntry struct {
	key memoKey
	vs  []Violation
}

// NewMemo returns a Memo holding at most max pairs.
func NewMemo(max int) *Memo {
	return &Memo{max: max, order: list.New(), byKey: map[memoKey]*list.Element{}}
}

// CheckSchemas is the package's CheckSchemas, with ids[i] the id of
// history[i] and next identified by fp: pairs already checked are
// answered from the memo, the others checked and remembered.
func (m *Memo) CheckSchemas(level Level, history []*Schema, ids []int64, next *Schema, fp Fingerprint, opts ...Option) []Violation {
	return checkHistory(level, len(history), func(i int, dirs Direction) []Violation {
		key := memoKey{ids[i], fp, dirs}
		if vs, ok := m.get(key); ok {
			return vs
		}
		vs := check(history[i], next, dirs)
		m.put(key, vs)
		return vs
	}, opts)
}

// Stats returns how many pairs were asked for and how many of them the
// memo answered.
func (m *Memo) Stats() (hits, total int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits, m.total
}

func (m *Memo) get(k memoKey) ([]Violation, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total++
	e, ok := m.byKey[k]
	if !ok {
		return nil, false
	}
	m.hits++
	m.order.MoveToFront(e)
	return e.Value.(*memoEntry).vs, true
}

func (m *Memo) put(k memoKey, vs []Violation) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byKey[k]; ok {
		return
	}
	m.byKey[k] = m.order.PushFront(&memoEntry{k, vs})
	for m.order.Len() > m.max {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.byKey, last.Value.(*memoEntry).key)
	}
}
