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
// keeping its other settings. A change is recorded in the audit log, as
// UpdateConfig records it.
func (s *Store) SetConfig(ctx context.Context, subject, level string) error {
	_, err := s.UpdateConfig(ctx, subject, func(cur ConfigRow, _ bool) (ConfigRow, error) {
		cur.Level = level
		return cur, nil
	})
	return err
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
// level nor settings is removed. A change is recorded in the audit log
// (action config, or config-delete when the config is removed) with the
// old and the new config; an update that changes nothing writes nothing.
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
	removed := next.Level == "" && next.Settings == ""
	if (!found && removed) || (found && next == cur) {
		return next, nil
	}
	action := AuditConfig
	if removed {
		action = AuditConfigDelete
		_, err = tx.ExecContext(ctx, s.q(`DELETE FROM config WHERE subject = ?`), subject)
	} else {
		_, err = tx.ExecContext(ctx, s.q(`INSERT INTO config (subject, level, settings) VALUES (?, ?, ?)
			ON CONFLICT(subject) DO UPDATE SET level = excluded.level, settings = excluded.settings`), subject, next.Level, next.Settings)
	}
	if err != nil {
		return ConfigRow{}, err
	}
	if err := s.audit(ctx, tx, action, subject, map[string]any{"old": configValue(cur, found), "new": configValue(next, !removed)}); err != nil {
		return ConfigRow{}, err
	}
	return next, tx.Commit()
}

// DeleteFullConfig removes subject's own config (the global one for "")
// and returns it; ErrConfigNotFound when it has none. The removal is
// recorded in the audit log (action config-delete).
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
	if err := s.audit(ctx, tx, AuditConfigDelete, subject, map[string]any{"old": configValue(prev, true), "new": nil}); err != nil {
		return ConfigRow{}, err
	}
	return prev, tx.Commit()
}

// Mode returns subject's own mode (READWRITE, READONLY, IMPORT), or the
// global one when subject is ""; ErrConfigNotFound when none is set.
func (s *Store) Mode(ctx context.Context, subject string) (string, error) {
	return s.setting(ctx, modes, subject)
}

// SetMode sets subject's mode, or the global one when subject is "". A
// change is recorded in the audit log (action mode, with the old and the
// new mode); setting the mode it has writes nothing.
func (s *Store) SetMode(ctx context.Context, subject, mode string) error {
	return s.setSetting(ctx, modes, subject, mode)
}

// DeleteMode removes subject's own mode and returns what it was. The
// removal is recorded in the audit log (action mode-delete).
func (s *Store) DeleteMode(ctx context.Context, subject string) (string, error) {
	return s.deleteSetting(ctx, modes, subject)
}

// settingTable is a table of per-subject settings: compatibility levels
// (config) or modes, with the audit actions of setting and removing one
// (modes only: configs change through UpdateConfig and DeleteFullConfig).
// Names are constants, never user input.
type settingTable struct{ table, column, set, remove string }

var (
	levels = settingTable{"config", "level", AuditConfig, AuditConfigDelete}
	modes  = settingTable{"modes", "mode", AuditMode, AuditModeDelete}
)

// configValue is a config as an audit entry's detail records it: nil when
// there is none, else its level and its settings (as JSON when they are).
func configValue(c ConfigRow, found bool) any {
	if !found {
		return nil
	}
	v := map[string]any{"level": c.Level}
	if c.Settings != "" {
		v["settings"] = jsonValue(c.Settings)
	}
	return v
}

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
	var old any
	var prev string
	err = tx.QueryRowContext(ctx, s.q(`SELECT `+t.column+` FROM `+t.table+` WHERE subject = ?`), subject).Scan(&prev)
	switch {
	case err == nil && prev == value:
		return nil
	case err == nil:
		old = prev
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO `+t.table+` (subject, `+t.column+`) VALUES (?, ?)
		ON CONFLICT(subject) DO UPDATE SET `+t.column+` = excluded.`+t.column), subject, value); err != nil {
		return err
	}
	if err := s.audit(ctx, tx, t.set, subject, map[string]any{"old": old, "new": value}); err != nil {
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
	if err := s.audit(ctx, tx, t.remove, subject, map[string]any{"old": prev, "new": nil}); err != nil {
		return "", err
	}
	return prev, tx.Commit()
}

// GlobalSubject is the subject argument naming the registry-wide config.
const GlobalSubject = globalKey
