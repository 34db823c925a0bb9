package store

import (
	"context"
	"sort"
	"strings"
)

// DefaultContext is the schema context of every subject not qualified
// with another, as in Confluent's registry.
const DefaultContext = "."

// SplitSubject returns a subject's schema context and its name within it:
// ":.ctx:name" is name in context ".ctx" (":.:name" is name in the default
// context); any other subject is itself, in the default context.
func SplitSubject(subject string) (ctx, name string) {
	if strings.HasPrefix(subject, ":.") {
		if i := strings.IndexByte(subject[1:], ':'); i >= 0 {
			return subject[1 : i+1], subject[i+2:]
		}
	}
	return DefaultContext, subject
}

// Contexts lists the schema contexts that have subjects (soft-deleted
// ones included), sorted; the default context is always listed. Subjects
// are stored under their qualified names, so a database written before
// contexts were understood needs no migration: its subjects, even those
// it stored with a literal ":.ctx:" prefix, fall where Confluent puts them.
func (s *Store) Contexts(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT subject FROM versions WHERE subject LIKE ':.%'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seen := map[string]bool{DefaultContext: true}
	for rows.Next() {
		var sub string
		if err := rows.Scan(&sub); err != nil {
			return nil, err
		}
		c, _ := SplitSubject(sub)
		seen[c] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out, nil
}

// InContext returns refs, made by a schema of subject, with each
// reference's subject read in subject's context, as Confluent does: an
// unqualified reference subject of a schema in ".ctx" names the subject
// of that name in ".ctx"; a qualified one (":.other:x", or ":.:x" for the
// default context) names that. refs itself when nothing changes.
func InContext(subject string, refs []Reference) []Reference {
	parent, _ := SplitSubject(subject)
	var out []Reference
	for i, r := range refs {
		q := qualify(parent, r.Subject)
		if q == r.Subject {
			continue
		}
		if out == nil {
			out = append([]Reference(nil), refs...)
		}
		out[i].Subject = q
	}
	if out == nil {
		return refs
	}
	return out
}

// qualify is subject, written in a schema of context parent, as the
// subject it names.
func qualify(parent, subject string) string {
	if c, name := SplitSubject(subject); name != subject {
		if c == DefaultContext {
			return name
		}
		return subject
	}
	if parent == DefaultContext || subject == "" {
		return subject
	}
	return ":" + parent + ":" + subject
}
