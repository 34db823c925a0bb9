package store

import (
	"context"
	"errors"

	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// DeleteSubject deletes every version of subject and returns their
// numbers. A soft delete hides the versions but keeps their ids and
// numbers (new versions continue the numbering); a permanent delete, only
// allowed after a soft delete, removes them and the subject's config. The
// delete is recorded in the audit log with the versions and schema ids it
// affected (and the config a permanent delete removed).
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
	var liveIDs, deletedIDs []int64
	for _, v := range all {
		if v.Deleted {
			deleted = append(deleted, v.Version)
			deletedIDs = append(deletedIDs, v.Schema.ID)
		} else {
			live = append(live, v.Version)
			liveIDs = append(liveIDs, v.Schema.ID)
		}
	}
	if !permanent {
		if len(live) == 0 {
			return nil, ErrSubjectSoftDeleted
		}
		if _, err := tx.ExecContext(ctx, s.q(`UPDATE versions SET deleted = 1 WHERE subject = ?`), subject); err != nil {
			return nil, err
		}
		if err := s.audit(ctx, tx, AuditDeleteSubject, subject, map[string]any{"permanent": false, "versions": live, "ids": liveIDs}); err != nil {
			return nil, err
		}
		return live, tx.Commit()
	}
	if len(live) > 0 {
		return nil, ErrSubjectNotSoftDeleted
	}
	cfg, err := s.fullConfig(ctx, tx, subject)
	found := err == nil
	if err != nil && !errors.Is(err, ErrConfigNotFound) {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM versions WHERE subject = ?`), subject); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM config WHERE subject = ?`), subject); err != nil {
		return nil, err
	}
	detail := map[string]any{"permanent": true, "versions": deleted, "ids": deletedIDs}
	if found {
		detail["config"] = configValue(cfg, true)
	}
	if err := s.audit(ctx, tx, AuditDeleteSubject, subject, detail); err != nil {
		return nil, err
	}
	return deleted, tx.Commit()
}

// DeleteVersion deletes one version (subjectref.Latest for the newest live
// one), softly or, after a soft delete, permanently, and returns its number.
// The delete is recorded in the audit log with the version and its id.
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
	if err := s.audit(ctx, tx, AuditDeleteVersion, subject, map[string]any{"permanent": permanent, "version": target.Version, "id": target.Schema.ID}); err != nil {
		return 0, err
	}
	return target.Version, tx.Commit()
}
