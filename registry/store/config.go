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
	return s.setting(ctx, levels, subject)
}

// SetConfig sets subject's level, or the global one when subject is "".
func (s *Store) SetConfig(ctx context.Context, subject, level string) error {
	return s.setSetting(ctx, levels, subject, level)
}

// DeleteConfig removes subject's own level (or the global one for "") and
// returns what it was.
func (s *Store) DeleteConfig(ctx context.Context, subject string) (string, error) {
	return s.deleteSetting(ctx, levels, subject)
}

// Mode returns subject's own mode (READWRITE, READONLY, IMPORT), or the
// global one when subject is ""; ErrConfigNotFound when none is set.
func (s *Store) Mode(ctx context.Context, subject string) (string, error) {
	return s.setting(ctx, modes, subject)
}

// SetMode sets subject's mode, or the global one when subject is "".
func (s *Store) SetMode(ctx context.Context, subject, mode string) error {
	return s.setSetting(ctx, modes, subject, mode)
}

// DeleteMode removes subject's own mode and returns what it was.
func (s *Store) DeleteMode(ctx context.Context, subject string) (string, error) {
	return s.deleteSetting(ctx, modes, subject)
}

// settingTable is a table of per-subject settings: compatibility levels
// (config) or modes. Names are constants, never user input.
type settingTable struct{ table, column string }

var (
	levels = settingTable{"config", "level"}
	modes  = settingTable{"modes", "mode"}
)

func (s *Store) setting(ctx context.Context, t settingTable, subject string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, s.q(`SELECT `+t.column+` FROM `+t.table+` WHERE subject = ?`), subject).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrConfigNotFound
	}
	return v, err
}

func (s *Store) setSetting(ctx context.Context, t settingTable, subject, value string) error {
	tx, done, err := s.begin(ctx, subject)
	if err != nil {
		return err
	}
	defer done()
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO `+t.table+` (subject, `+t.column+`) VALUES (?, ?)
		ON CONFLICT(subject) DO UPDATE SET `+t.column+` = excluded.`+t.column), subject, value); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *Store) deleteSetting(ctx context.Context, t settingTable, subject string) (string, error) {
	tx, done, err := s.begin(ctx, subject)
	if err != nil {
		return "", err
	}
	defer done()
	var prev string
	err = tx.QueryRowContext(ctx, s.q(`SELECT `+t.column+` FROM `+t.table+` WHERE subject = ?`), subject).Scan(&prev)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrConfigNotFound
	}
	if err != nil {
		return "", err
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM `+t.table+` WHERE subject = ?`), subject); err != nil {
		return "", err
	}
	return prev, tx.Commit()
}

// GlobalSubject is the subject argument naming the registry-wide config.
const GlobalSubject = globalKey
