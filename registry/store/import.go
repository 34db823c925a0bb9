package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// ErrImportConflict is an IMPORT registration whose id or version is
// already taken by another schema.
var ErrImportConflict = errors.New("import conflict")

// Import registers sc as subject's version (the next one when 0) under
// schema id (a new id when 0), as a registry in IMPORT mode does when
// copying another registry: ids and versions keep their numbers. The same
// schema at the same id and version again is not an error, and records
// nothing in the audit log; an import does, with ctx's Actor.
func (s *Store) Import(ctx context.Context, subject string, sc Schema, id int64, version int) (Registered, error) {
	tx, done, err := s.begin(ctx, subject)
	if err != nil {
		return Registered{}, err
	}
	defer done()
	sc.Context, _ = subjectref.Split(subject)
	fp := sc.Fingerprint()
	if id == 0 {
		if id, err = s.schemaID(ctx, tx, sc, fp); err != nil {
			return Registered{}, err
		}
	} else if err := s.importSchema(ctx, tx, sc, fp, id); err != nil {
		return Registered{}, err
	}
	if version == 0 {
		if err := tx.QueryRowContext(ctx, s.q(`SELECT COALESCE(MAX(version), 0) + 1 FROM versions WHERE subject = ?`), subject).Scan(&version); err != nil {
			return Registered{}, err
		}
	}
	var have int64
	err = tx.QueryRowContext(ctx, s.q(`SELECT schema_id FROM versions WHERE subject = ? AND version = ?`), subject, version).Scan(&have)
	switch {
	case err == nil && have == id:
		return Registered{ID: id, Version: version, Existed: true}, nil
	case err == nil:
		return Registered{}, fmt.Errorf("%w: subject %q version %d already holds schema %d", ErrImportConflict, subject, version, have)
	case !errors.Is(err, sql.ErrNoRows):
		return Registered{}, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO versions (subject, version, schema_id) VALUES (?, ?, ?)`), subject, version, id); err != nil {
		return Registered{}, err
	}
	if err := s.audit(ctx, tx, AuditImport, subject, map[string]any{"version": version, "id": id}); err != nil {
		return Registered{}, err
	}
	return Registered{ID: id, Version: version}, tx.Commit()
}

// importSchema stores sc under the given id, unless the id already holds
// it; an id or content already stored otherwise is ErrImportConflict.
func (s *Store) importSchema(ctx context.Context, tx *sql.Tx, sc Schema, fp string, id int64) error {
	var have int64
	err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM schemas WHERE fingerprint = ?`), fp).Scan(&have)
	switch {
	case err == nil && have == id:
		return nil
	case err == nil:
		return fmt.Errorf("%w: this schema already has id %d, not %d", ErrImportConflict, have, id)
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	var taken int
	if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM schemas WHERE id = ?`), id).Scan(&taken); err != nil {
		return err
	}
	if taken > 0 {
		return fmt.Errorf("%w: id %d already holds another schema", ErrImportConflict, id)
	}
	refs, _ := json.Marshal(nonNil(sc.References))
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schemas (id, fingerprint, schema_type, schema_text, refs, descriptor, metadata, rule_set) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
		id, fp, sc.Type, sc.Text, string(refs), sc.Descriptor, sc.Metadata, sc.RuleSet); err != nil {
		return err
	}
	if s.pg {
		// An explicit id does not advance the sequence: move it past the
		// largest id, so later registrations do not collide.
		if _, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('schemas', 'id'), (SELECT MAX(id) FROM schemas))`); err != nil {
			return err
		}
	}
	return nil
}
