package store

import (
	"context"
	"sort"

	"github.com/msgcontract/msgcontract/registry/subjectref"
)

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
	seen := map[string]bool{subjectref.DefaultContext: true}
	for rows.Next() {
		var sub string
		if err := rows.Scan(&sub); err != nil {
			return nil, err
		}
		c, _ := subjectref.Split(sub)
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
