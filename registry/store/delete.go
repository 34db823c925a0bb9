package store

import (
	"context"

	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// DeleteSubject deletes every version of subject and returns their
// numbers. A soft delete hides the versions but keeps their ids and
// numbers (new versions continue the numbering); a permanent delete, only
// allowed after a soft delete, removes them and the subject's config.
func (s *Store) DeleteSubject(ctx context.Context, subject string, permanent bool) ([]int, error) {
	tx, done, err := s.begin(ctx, subject)
	if err != nil {
		return nil, err
	}
	defer done()
	all, err := s.versions(ctx, tx, subject, true)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, ErrSubjectNotFound
	}
	var live, deleted []int
	for _, v := range all {
		if v.Deleted {
			deleted = append(deleted, v.Version)
		} else {
			live = append(live, v.Version)
		}
	}
	if !permanent {
		if len(live) == 0 {
			return nil, ErrSubjectSoftDeleted
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE versions SET deleted = 1 WHERE subject = ?`), subject); err != nil {
			return nil, err
		}
		return live, tx.Commit()
	}
	if len(live) > 0 {
		return nil, ErrSubjectNotSoftDeleted
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM versions WHERE subject = ?`), subject); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM config WHERE subject = ?`), subject); err != nil {
		return nil, err
	}
	return deleted, tx.Commit()
}

// DeleteVersion deletes one version (subjectref.Latest for the newest live
// one), softly or, after a soft delete, permanently, and returns its number.
func (s *Store) DeleteVersion(ctx context.Context, subject string, version int, permanent bool) (int, error) {
	tx, done, err := s.begin(ctx, subject)
	if err != nil {
		return 0, err
	}
	defer done()
	all, err := s.versions(ctx, tx, subject, true)
	if err != nil {
		return 0, err
	}
	if len(all) == 0 {
		return 0, ErrSubjectNotFound
	}
	var target *Version
	for i := range all {
		v := &all[i]
		if (version == subjectref.Latest && !v.Deleted) || v.Version == version {
			target = v
		}
	}
	if target == nil {
		return 0, ErrVersionNotFound
	}
	switch {
	case !permanent && target.Deleted:
		return 0, ErrVersionSoftDeleted
	case !permanent:
		_, err = tx.ExecContext(ctx, s.q(`UPDATE versions SET deleted = 1 WHERE subject = ? AND version = ?`), subject, target.Version)
	case !target.Deleted:
		return 0, ErrVersionNotSoftDeleted
	default:
		_, err = tx.ExecContext(ctx, s.q(`DELETE FROM versions WHERE subject = ? AND version = ?`), subject, target.Version)
	}
	if err != nil {
		return 0, err
	}
	return target.Version, tx.Commit()
}
