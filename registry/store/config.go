package store

import (
	"context"
	"database/sql"
	"errors"
)

// globalKey is the config row of the registry-wide level. Subject names
// cannot be empty, so it never collides with one.
const globalKey = ""

// Config returns subject's own compatibility level, or the global one when
// subject is "". A subject without a level of its own is ErrConfigNotFound;
// a global level never set is ("", ErrConfigNotFound) too, and callers
// apply their default.
func (s *Store) Config(ctx context.Context, subject string) (string, error) {
	var level string
	err := s.db.QueryRowContext(ctx, `SELECT level FROM config WHERE subject = ?`, subject).Scan(&level)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrConfigNotFound
	}
	return level, err
}

// SetConfig sets subject's level, or the global one when subject is "".
func (s *Store) SetConfig(ctx context.Context, subject, level string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.db.ExecContext(ctx, `INSERT INTO config (subject, level) VALUES (?, ?)
		ON CONFLICT(subject) DO UPDATE SET level = excluded.level`, subject, level)
	return err
}

// DeleteConfig removes subject's own level (or the global one for "") and
// returns what it was.
func (s *Store) DeleteConfig(ctx context.Context, subject string) (string, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	prev, err := s.Config(ctx, subject)
	if err != nil {
		return "", err
	}
	_, err = s.db.ExecContext(ctx, `DELETE FROM config WHERE subject = ?`, subject)
	return prev, err
}

// GlobalSubject is the subject argument naming the registry-wide config.
const GlobalSubject = globalKey
