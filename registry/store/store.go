// Package store keeps the registry's subjects, versions, schemas and
// compatibility configuration in SQLite (github.com/mattn/go-sqlite3) in
// WAL mode. Every registration is one immediate (writer) transaction, so
// concurrent registrations on one subject get distinct consecutive
// versions, and a process killed mid-write leaves the last committed state.
//
// Schema ids are global and content-addressed: the same schema text with
// the same references has one id in every subject that registers it.
//
// Every change is recorded, in its own transaction, in a hash-chained
// audit log with the Actor its context carries (WithActor); AuditEntries
// lists it and VerifyAudit checks the chain (audit.go).
package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// Errors the store returns; the API maps each to a Confluent error code.
var (
	ErrSubjectNotFound       = errors.New("subject not found")
	ErrVersionNotFound       = errors.New("version not found")
	ErrSchemaNotFound        = errors.New("schema not found")
	ErrSubjectSoftDeleted    = errors.New("subject was soft deleted; delete it with permanent=true to remove it")
	ErrSubjectNotSoftDeleted = errors.New("subject must be soft deleted before it is permanently deleted")
	ErrVersionSoftDeleted    = errors.New("version was soft deleted; delete it with permanent=true to remove it")
	ErrVersionNotSoftDeleted = errors.New("version must be soft deleted before it is permanently deleted")
	ErrConfigNotFound        = errors.New("subject has no compatibility level of its own")
)

// Schema is a registered schema.
type Schema struct {
	ID int64
	// Type is "PROTOBUF".
	Type string
	// Text is the .proto source, as registered or printed from a
	// registered descriptor.
	Text string
	// Descriptor is the serialized FileDescriptorProto of Text.
	Descriptor []byte
	References []subjectref.Reference
	// Metadata and RuleSet are the version's data-contract metadata and
	// rules as canonical JSON (datacontract.Encode), "" for none. They are
	// part of the schema's identity, as in Confluent: the same text with
	// other metadata is another schema, with another id.
	Metadata string
	RuleSet  string
	// Context is the schema context the schema is registered in ("" or
	// subjectref.DefaultContext for the default one). Schemas of different
	// contexts are different rows with different ids, as in Confluent,
	// where each context is a registry of its own.
	Context string
	// fingerprint is Fingerprint() as stored, for schemas read from the
	// store: comparing a registration against a long history then costs
	// no hashing.
	fingerprint string
}

// Fingerprint identifies a schema's content: type, text and references,
// and its context unless that is the default one (so rows written before
// contexts keep their fingerprints), and its metadata and rule set when
// it has them (so rows written before them keep theirs too).
func (s Schema) Fingerprint() string {
	if s.fingerprint != "" {
		return s.fingerprint
	}
	fp := s.contentFingerprint()
	if s.Metadata == "" && s.RuleSet == "" {
		return fp
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00metadata\x00%s\x00ruleSet\x00%s", fp, s.Metadata, s.RuleSet)
	return hex.EncodeToString(h.Sum(nil))
}

// contentFingerprint is Fingerprint without metadata and rule set.
func (s Schema) contentFingerprint() string {
	if s.fingerprint != "" && s.Metadata == "" && s.RuleSet == "" {
		return s.fingerprint
	}
	refs, _ := json.Marshal(nonNil(s.References))
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s", s.Type, s.Text, refs)
	if s.Context != "" && s.Context != subjectref.DefaultContext {
		fmt.Fprintf(h, "\x00context\x00%s", s.Context)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// legacyFingerprint is, for a schema of a context other than the default
// one, its fingerprint without the context: how a store written before
// contexts were understood fingerprinted a subject stored under the
// literal name ":.ctx:subject". A version of such a subject with that
// fingerprint is the same schema. "" for the default context.
func legacyFingerprint(sc Schema) string {
	if sc.Context == "" || sc.Context == subjectref.DefaultContext {
		return ""
	}
	sc.Context, sc.fingerprint = "", ""
	return sc.Fingerprint()
}

// Same reports whether a and b are one schema: the same text and
// references, or the same compiled descriptor and references (the text and
// the base64 descriptor forms of one file, which differ only in layout and
// comments).
func Same(a, b Schema) bool {
	return a.Metadata == b.Metadata && a.RuleSet == b.RuleSet && SameContent(a, b)
}

// SameContent is Same without comparing metadata and rule sets.
func SameContent(a, b Schema) bool {
	if a.Type != b.Type {
		return false
	}
	if a.contentFingerprint() == b.contentFingerprint() {
		return true
	}
	if len(a.Descriptor) == 0 || !bytes.Equal(a.Descriptor, b.Descriptor) {
		return false
	}
	ra, _ := json.Marshal(nonNil(a.References))
	rb, _ := json.Marshal(nonNil(b.References))
	return bytes.Equal(ra, rb)
}

// Version is one version of a subject.
type Version struct {
	Subject string
	Version int
	Deleted bool
	Schema  Schema
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// CheckFunc decides whether schema may become the subject's next version,
// given its live versions, oldest first. It runs inside the registration's
// writer transaction, so no other registration on the store interleaves.
type CheckFunc func(ctx context.Context, live []Version) error

// Registered is the outcome of Register.
type Registered struct {
	ID      int64
	Version int
	// Existed reports that the subject already had this schema; nothing
	// was written.
	Existed bool
}

// Register adds sc as the next version of subject, unless the subject's
// live versions already hold the same schema, in which case that version
// is returned. check, when not nil, may veto the new version; its error is
// returned unchanged. A new version is recorded in the audit log, with
// ctx's Actor, in the same transaction; an existing one returned records
// nothing.
func (s *Store) Register(ctx context.Context, subject string, sc Schema, check CheckFunc) (Registered, error) {
	return s.RegisterPrepared(ctx, subject, sc, nil, check)
}

// PrepareFunc decides, first in a registration's writer transaction, the
// schema to register from the one sent (sc), the subject's live versions
// (oldest first) and the number the new version would get: its metadata
// and rule set may depend on them. It returns that schema and, when not
// nil, the test that a live version already holds it (Same otherwise).
type PrepareFunc func(ctx context.Context, sc Schema, live []Version, next int) (Schema, func(Version) bool, error)

// RegisterPrepared is Register with prepare (when not nil) deciding the
// schema to register.
func (s *Store) RegisterPrepared(ctx context.Context, subject string, sc Schema, prepare PrepareFunc, check CheckFunc) (Registered, error) {
	tx, done, err := s.begin(ctx, subject)
	if err != nil {
		return Registered{}, err
	}
	defer done()
	live, err := s.versions(ctx, tx, subject, false)
	if err != nil {
		return Registered{}, err
	}
	var next int
	if err := tx.QueryRowContext(ctx, s.q(`SELECT COALESCE(MAX(version), 0) + 1 FROM versions WHERE subject = ?`), subject).Scan(&next); err != nil {
		return Registered{}, err
	}
	var held func(Version) bool
	if prepare != nil {
		if sc, held, err = prepare(ctx, sc, live, next); err != nil {
			return Registered{}, err
		}
	}
	sc.Context, _ = subjectref.Split(subject)
	fp := sc.Fingerprint()
	sc.fingerprint = fp
	legacy := legacyFingerprint(sc)
	for _, v := range live {
		if (held != nil && held(v)) || (held == nil && Same(v.Schema, sc)) || v.Schema.Fingerprint() == legacy {
			return Registered{ID: v.Schema.ID, Version: v.Version, Existed: true}, nil
		}
	}
	if check != nil {
		if err := check(ctx, live); err != nil {
			return Registered{}, err
		}
	}
	id, err := s.schemaID(ctx, tx, sc, fp)
	if err != nil {
		return Registered{}, err
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO versions (subject, version, schema_id) VALUES (?, ?, ?)`), subject, next, id); err != nil {
		return Registered{}, err
	}
	if err := s.audit(ctx, tx, AuditRegister, subject, map[string]any{"version": next, "id": id}); err != nil {
		return Registered{}, err
	}
	if err := tx.Commit(); err != nil {
		return Registered{}, err
	}
	return Registered{ID: id, Version: next}, nil
}

// schemaID returns the id of the schema with fingerprint fp, storing it
// first if it is new. It looks before inserting so that PostgreSQL's
// sequence, which an insert consumes even when it conflicts, is not
// spent on schemas that already have an id.
func (s *Store) schemaID(ctx context.Context, tx *sql.Tx, sc Schema, fp string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM schemas WHERE fingerprint = ?`), fp).Scan(&id)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return id, err
	}
	refs, _ := json.Marshal(nonNil(sc.References))
	if _, err := tx.ExecContext(ctx,
		s.q(`INSERT INTO schemas (fingerprint, schema_type, schema_text, refs, descriptor, metadata, rule_set) VALUES (?, ?, ?, ?, ?, ?, ?)
		 ON CONFLICT(fingerprint) DO NOTHING`), fp, sc.Type, sc.Text, string(refs), sc.Descriptor, sc.Metadata, sc.RuleSet); err != nil {
		return 0, err
	}
	err = tx.QueryRowContext(ctx, s.q(`SELECT id FROM schemas WHERE fingerprint = ?`), fp).Scan(&id)
	return id, err
}

func nonNil(r []subjectref.Reference) []subjectref.Reference {
	if r == nil {
		return []subjectref.Reference{}
	}
	return r
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

const versionCols = `v.subject, v.version, v.deleted, s.id, s.schema_type, s.schema_text, s.refs, s.descriptor, s.fingerprint, s.metadata, s.rule_set`

func scanVersion(sc interface{ Scan(...any) error }) (Version, error) {
	var (
		v    Version
		refs string
	)
	if err := sc.Scan(&v.Subject, &v.Version, &v.Deleted, &v.Schema.ID, &v.Schema.Type, &v.Schema.Text, &refs, &v.Schema.Descriptor, &v.Schema.fingerprint, &v.Schema.Metadata, &v.Schema.RuleSet); err != nil {
		return Version{}, err
	}
	if err := json.Unmarshal([]byte(refs), &v.Schema.References); err != nil {
		return Version{}, fmt.Errorf("schema %d: corrupt references: %w", v.Schema.ID, err)
	}
	if len(v.Schema.References) == 0 {
		v.Schema.References = nil
	}
	v.Schema.Context, _ = subjectref.Split(v.Subject)
	return v, nil
}

// versions lists subject's versions, oldest first.
func (s *Store) versions(ctx context.Context, q querier, subject string, deleted bool) ([]Version, error) {
	return s.queryVersions(ctx, q, `v.subject = ? AND (? OR v.deleted = 0) ORDER BY v.version`, subject, deleted)
}

// queryVersions lists the versions, with their schemas, that where selects.
func (s *Store) queryVersions(ctx context.Context, q querier, where string, args ...any) ([]Version, error) {
	rows, err := q.QueryContext(ctx, s.q(`SELECT `+versionCols+` FROM versions v JOIN schemas s ON s.id = v.schema_id WHERE `+where), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Version
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Versions lists a subject's versions, oldest first; soft-deleted ones only
// when deleted is set. A subject with none is ErrSubjectNotFound.
func (s *Store) Versions(ctx context.Context, subject string, deleted bool) ([]Version, error) {
	vs, err := s.versions(ctx, s.db, subject, deleted)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		return nil, ErrSubjectNotFound
	}
	return vs, nil
}

// VersionHeads lists a subject's live versions, oldest first, like
// Versions, with only each schema's id: no text, references or
// descriptor. A check against a long history whose versions are compiled
// already needs no more; SchemaByID reads the rest of one that is not. A
// subject with none is ErrSubjectNotFound.
func (s *Store) VersionHeads(ctx context.Context, subject string) ([]Version, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT subject, version, deleted, schema_id FROM versions
		WHERE subject = ? AND deleted = 0 ORDER BY version`), subject)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Version
	for rows.Next() {
		var v Version
		if err := rows.Scan(&v.Subject, &v.Version, &v.Deleted, &v.Schema.ID); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, ErrSubjectNotFound
	}
	return out, nil
}

// Subjects lists subject names in order; soft-deleted subjects only when
// deleted is set.
func (s *Store) Subjects(ctx context.Context, deleted bool) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT DISTINCT subject FROM versions WHERE (? OR deleted = 0) ORDER BY subject`), deleted)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		out = append(out, name)
	}
	return out, rows.Err()
}

// Version returns one version of subject (subjectref.Latest for the newest
// live one).
// Soft-deleted versions are found only when deleted is set.
func (s *Store) Version(ctx context.Context, subject string, version int, deleted bool) (Version, error) {
	vs, err := s.Versions(ctx, subject, deleted)
	if err != nil {
		return Version{}, err
	}
	if version == subjectref.Latest {
		for i := len(vs) - 1; i >= 0; i-- {
			if !vs[i].Deleted {
				return vs[i], nil
			}
		}
		return Version{}, ErrVersionNotFound
	}
	for _, v := range vs {
		if v.Version == version {
			return v, nil
		}
	}
	return Version{}, ErrVersionNotFound
}

// SchemaByID returns the schema with id, if some version (live or soft
// deleted) still uses it.
func (s *Store) SchemaByID(ctx context.Context, id int64) (Schema, error) {
	row := s.db.QueryRowContext(ctx, s.q(`SELECT `+versionCols+` FROM versions v JOIN schemas s ON s.id = v.schema_id
		WHERE s.id = ? LIMIT 1`), id)
	v, err := scanVersion(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Schema{}, ErrSchemaNotFound
	}
	return v.Schema, err
}

// AllVersions lists every version of every subject whose name starts with
// prefix, by subject and version; soft-deleted ones only when deleted is
// set.
func (s *Store) AllVersions(ctx context.Context, prefix string, deleted bool) ([]Version, error) {
	// substr counts characters in both SQLite and PostgreSQL.
	return s.queryVersions(ctx, s.db, `substr(v.subject, 1, ?) = ? AND (? OR v.deleted = 0) ORDER BY v.subject, v.version`,
		utf8.RuneCountInString(prefix), prefix, deleted)
}

// SubjectVersion names one version of a subject.
type SubjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// SubjectVersionsByID lists the versions that use schema id: the live
// ones, and with deleted the soft-deleted ones too.
func (s *Store) SubjectVersionsByID(ctx context.Context, id int64, deleted bool) ([]SubjectVersion, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT subject, version, deleted FROM versions WHERE schema_id = ? ORDER BY subject, version`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []SubjectVersion{}
	found := false
	for rows.Next() {
		var sv SubjectVersion
		var del int
		if err := rows.Scan(&sv.Subject, &sv.Version, &del); err != nil {
			return nil, err
		}
		found = true
		if del == 0 || deleted {
			out = append(out, sv)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !found {
		// No version, live or soft deleted, uses the id: it is unknown.
		return nil, ErrSchemaNotFound
	}
	// An id whose every version is soft deleted still exists (GET
	// /schemas/ids/{id} answers it): its list is empty, as in Confluent.
	return out, nil
}

// Lookup finds the version of subject holding sc: live ones only, or also
// soft-deleted ones when deleted is set.
func (s *Store) Lookup(ctx context.Context, subject string, sc Schema, deleted bool) (Version, error) {
	vs, err := s.Versions(ctx, subject, deleted)
	if err != nil {
		return Version{}, err
	}
	sc.Context, _ = subjectref.Split(subject)
	sc.fingerprint = sc.Fingerprint()
	legacy := legacyFingerprint(sc)
	for _, v := range vs {
		if Same(v.Schema, sc) || v.Schema.Fingerprint() == legacy {
			return v, nil
		}
	}
	return Version{}, ErrSchemaNotFound
}

// ReferencedBy lists the ids of schemas, used by live versions, whose
// references name subject's version.
func (s *Store) ReferencedBy(ctx context.Context, subject string, version int) ([]int64, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT DISTINCT s.id, s.refs, v.subject FROM schemas s JOIN versions v ON v.schema_id = s.id
		WHERE v.deleted = 0 AND s.refs != '[]' ORDER BY s.id`))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var (
			id       int64
			raw, sub string
			refs     []subjectref.Reference
		)
		if err := rows.Scan(&id, &raw, &sub); err != nil {
			return nil, err
		}
		if (len(out) > 0 && out[len(out)-1] == id) || json.Unmarshal([]byte(raw), &refs) != nil {
			continue
		}
		// A reference's subject is read in the referring subject's context.
		for _, r := range subjectref.InContext(sub, refs) {
			// References are pinned when registered; a row written before
			// that may say -1 or 0 (latest then), so it counts as naming
			// every version of the subject rather than none.
			if r.Subject == subject && (r.Version == version || r.Version <= 0) {
				out = append(out, id)
				break
			}
		}
	}
	return out, rows.Err()
}

// Check runs SQLite's integrity check and verifies that every subject's
// versions are numbered without duplicates and reference existing schemas.
func (s *Store) Check(ctx context.Context) error {
	if !s.pg {
		var res string
		if err := s.db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
			return err
		}
		if res != "ok" {
			return fmt.Errorf("sqlite integrity check: %s", res)
		}
	}
	var orphans int
	if err := s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM versions v LEFT JOIN schemas s ON s.id = v.schema_id WHERE s.id IS NULL`)).Scan(&orphans); err != nil {
		return err
	}
	if orphans > 0 {
		return fmt.Errorf("%d versions reference missing schemas", orphans)
	}
	return nil
}
