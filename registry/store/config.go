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
	err := s.db.QueryRowContext(ctx, s.q(`SELECT level FROM config WHERE subject = ?`), subject).Scan(&level)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrConfigNotFound
	}
	return level, err
}

// SetConfig sets subject's level, or the global one when subject is "".
func (s *Store) SetConfig(ctx context.Context, subject, level string) error {
	tx, done, err := s.begin(ctx, subject)
	if err != nil {
		return err
	}
	defer done()
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO config (subject, level) VALUES (?, ?)
		ON CONFLICT(subject) DO UPDATE SET level = excluded.level`), subject, level); err != nil {
		return err
	}
	return tx.Commit()
}

// DeleteConfig removes subject's own level (or the global one for "") and
// returns what it was.
func (s *Store) DeleteConfig(ctx context.Context, subject string) (string, error) {
	tx, done, err := s.begin(ctx, subject)
	if err != nil {
		return "", err
	}
	defer done()
	var prev string
	err = tx.QueryRowContext(ctx, s.q(`SELECT level FROM config WHERE subject = ?`), subject).Scan(&prev)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrConfigNotFound
	}
	if err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM config WHERE subject = ?`), subject); err != nil {
		return "", err
	}
	return prev, tx.Commit()
}

// GlobalSubject is the subject argument naming the registry-wide config.
const GlobalSubject = globalKey
