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
// subject is "". A subject without a level of its own is ErrConfigNotFound
// (also when its config has other settings but no level); a global level
// never set is ("", ErrConfigNotFound) too, and callers apply their
// default.
func (s *Store) Config(ctx context.Context, subject string) (string, error) {
	l, err := s.setting(ctx, levels, subject)
	if err == nil && l == "" {
		return "", ErrConfigNotFound
	}
	return l, err
}

// SetConfig sets subject's level, or the global one when subject is "",
// keeping its other settings.
func (s *Store) SetConfig(ctx context.Context, subject, level string) error {
	return s.setSetting(ctx, levels, subject, level)
}

// DeleteConfig removes subject's own config (or the global one for ""),
// level and settings, and returns the level it had.
func (s *Store) DeleteConfig(ctx context.Context, subject string) (string, error) {
	c, err := s.DeleteFullConfig(ctx, subject)
	return c.Level, err
}

// ConfigRow is a config as stored: the compatibility level ("" when the
// config has none) and the other settings of Confluent's config as one
// JSON object ("" when none; see datacontract.Config), which the store
// keeps as given.
type ConfigRow struct {
	Level    string
	Settings string
}

// FullConfig returns subject's own config (the global one for "");
// ErrConfigNotFound when it has none.
func (s *Store) FullConfig(ctx context.Context, subject string) (ConfigRow, error) {
	return s.fullConfig(ctx, s.db, subject)
}

func (s *Store) fullConfig(ctx context.Context, q querier, subject string) (ConfigRow, error) {
	var c ConfigRow
	err := q.QueryRowContext(ctx, s.q(`SELECT level, settings FROM config WHERE subject = ?`), subject).Scan(&c.Level, &c.Settings)
	if errors.Is(err, sql.ErrNoRows) {
		return ConfigRow{}, ErrConfigNotFound
	}
	return c, err
}

// UpdateConfig replaces subject's config (the global one for "") by what
// update makes of the current one (found reports that there is one), in
// one writer transaction, and returns the new one. A config with neither
// level nor settings is removed.
func (s *Store) UpdateConfig(ctx context.Context, subject string, update func(cur ConfigRow, found bool) (ConfigRow, error)) (ConfigRow, error) {
	tx, done, err := s.begin(ctx, subject)
	if err != nil {
		return ConfigRow{}, err
	}
	defer done()
	cur, err := s.fullConfig(ctx, tx, subject)
	found := err == nil
	if err != nil && !errors.Is(err, ErrConfigNotFound) {
		return ConfigRow{}, err
	}
	next, err := update(cur, found)
	if err != nil {
		return ConfigRow{}, err
	}
	if next.Level == "" && next.Settings == "" {
		_, err = tx.ExecContext(ctx, s.q(`DELETE FROM config WHERE subject = ?`), subject)
	} else {
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO config (subject, level, settings) VALUES (?, ?, ?)
			ON CONFLICT(subject) DO UPDATE SET level = excluded.level, settings = excluded.settings`), subject, next.Level, next.Settings)
	}
	if err != nil {
		return ConfigRow{}, err
	}
	return next, tx.Commit()
}

// DeleteFullConfig removes subject's own config (the global one for "")
// and returns it; ErrConfigNotFound when it has none.
func (s *Store) DeleteFullConfig(ctx context.Context, subject string) (ConfigRow, error) {
	tx, done, err := s.begin(ctx, subject)
	if err != nil {
		return ConfigRow{}, err
	}
	defer done()
	prev, err := s.fullConfig(ctx, tx, subject)
	if err != nil {
		return ConfigRow{}, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM config WHERE subject = ?`), subject); err != nil {
		return ConfigRow{}, err
	}
	return prev, tx.Commit()
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
