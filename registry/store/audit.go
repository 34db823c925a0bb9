package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// Actor is who asked for a change, as the audit log records it.
type Actor struct {
	// Principal names the caller: "user:alice", "token:deploy-bot",
	// "jwt:svc-1", "cert:payments", "anonymous"; empty means "local" (a
	// process using the store directly).
	Principal string
	// Method is how the caller authenticated: "basic", "bearer", "jwt",
	// "mtls", "token", "anonymous", or "" (local).
	Method string
	// Remote is the client's address (host:port or IP), "" when local.
	Remote string
}

// LocalPrincipal is the principal of changes made with no Actor in their
// context: by a process using the store directly.
const LocalPrincipal = "local"

type actorKey struct{}

// WithActor returns ctx carrying a; the store's changing methods record it.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx carries (Principal "local" when none).
func ActorFrom(ctx context.Context) Actor {
	a, _ := ctx.Value(actorKey{}).(Actor)
	if a.Principal == "" {
		a.Principal = LocalPrincipal
	}
	return a
}

// The actions of audit entries, one per kind of change.
const (
	AuditRegister      = "register"       // a new version (RegisterPrepared)
	AuditImport        = "import"         // a version imported with its id (Import)
	AuditDeleteSubject = "delete-subject" // DeleteSubject
	AuditDeleteVersion = "delete-version" // DeleteVersion
	AuditConfig        = "config"         // a config set or changed
	AuditConfigDelete  = "config-delete"  // a config removed
	AuditMode          = "mode"           // a mode set or changed
	AuditModeDelete    = "mode-delete"    // a mode removed
)

// zeroHash is the prev_hash of the first entry.
var zeroHash = strings.Repeat("0", 64)

// auditTime is the layout of audit_log.at: RFC 3339 in UTC with all nine
// digits of nanoseconds, so that the text sorts as the time does.
const auditTime = "2006-01-02T15:04:05.000000000Z07:00"

// AuditEntry is one entry of the audit log: one change to the registry.
//
// Hash is the lower-case hex SHA-256 of the entry's fields Seq, At (as
// stored), Principal, Method, Remote, Action, Subject, Detail and
// PrevHash, in that order, each written as its byte length (8 bytes, big
// endian) followed by its bytes (Seq in decimal), after the same encoding
// of the tag "msgcontract-audit-v1". PrevHash is the previous entry's
// Hash, 64 zeros for the first entry, so each entry seals all before it.
type AuditEntry struct {
	// Seq numbers entries 1, 2, 3... in the order they were committed.
	Seq int64
	// At is when the change was made, in UTC.
	At time.Time
	// Principal, Method and Remote are the Actor of the change.
	Principal string
	Method    string
	Remote    string
	// Action is one of the Audit* constants.
	Action string
	// Subject is the subject changed ("" for the global config and mode).
	Subject string
	// Detail is the change's particulars as a JSON object with sorted keys:
	// version and id of a registration, the versions and ids a delete
	// affected, the old and new value of a config or mode.
	Detail string
	// PrevHash and Hash chain the entry to the one before it.
	PrevHash string
	Hash     string

	// at is At as stored, which the hash covers.
	at string
}

// hash computes e's hash from its fields as stored.
func (e AuditEntry) hash() string {
	h := sha256.New()
	var n [8]byte
	for _, f := range []string{"msgcontract-audit-v1", strconv.FormatInt(e.Seq, 10), e.at, e.Principal, e.Method, e.Remote, e.Action, e.Subject, e.Detail, e.PrevHash} {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalDetail encodes detail as a JSON object with sorted keys.
// Values that are JSON text themselves (config settings) go in as
// json.RawMessage and are re-encoded canonically too.
func canonicalDetail(detail map[string]any) (string, error) {
	b, err := json.Marshal(detail)
	if err != nil {
		return "", err
	}
	// Round-trip through maps so that nested objects' keys are sorted as
	// well; UseNumber keeps numbers as written.
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(out.String(), "\n"), nil
}

// jsonValue is text as a JSON value when it is valid JSON (config
// settings, which the store keeps as given), else as a string.
func jsonValue(text string) any {
	if json.Valid([]byte(text)) {
		return json.RawMessage(text)
	}
	return text
}

// audit appends an entry for a change made in tx by ctx's actor. It must
// be the last statement of tx before the commit: on PostgreSQL it locks
// the audit log until then, so that appends from every instance sharing
// the store serialize and no two get the same seq or prev_hash. SQLite's
// writer transactions are serialized already (begin).
func (s *Store) audit(ctx context.Context, tx *sql.Tx, action, subject string, detail map[string]any) error {
	if s.pg {
		if _, err := tx.ExecContext(ctx, `LOCK TABLE audit_log IN EXCLUSIVE MODE`); err != nil {
			return fmt.Errorf("audit log: lock: %w", err)
		}
	}
	d, err := canonicalDetail(detail)
	if err != nil {
		return fmt.Errorf("audit log: encode the detail of %s %q: %w", action, subject, err)
	}
	a := ActorFrom(ctx)
	e := AuditEntry{Principal: a.Principal, Method: a.Method, Remote: a.Remote, Action: action, Subject: subject, Detail: d}
	err = tx.QueryRowContext(ctx, `SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1`).Scan(&e.Seq, &e.PrevHash)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		e.PrevHash = zeroHash
	case err != nil:
		return fmt.Errorf("audit log: read its head: %w", err)
	}
	e.Seq++
	e.at = time.Now().UTC().Format(auditTime)
	e.Hash = e.hash()
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO audit_log (seq, at, principal, method, remote, action, subject, detail, prev_hash, hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		e.Seq, e.at, e.Principal, e.Method, e.Remote, e.Action, e.Subject, e.Detail, e.PrevHash, e.Hash); err != nil {
		return fmt.Errorf("audit log: append entry %d: %w", e.Seq, err)
	}
	return nil
}

// AuditFilter selects audit entries; zero fields select all.
type AuditFilter struct {
	// Subject selects the entries of one subject, exactly; a subject of
	// the default context matches both its plain and its ":.:" form.
	Subject string
	// Principal selects the entries of one principal, exactly.
	Principal string
	// Since and Until bound the entries' times, both inclusive.
	Since, Until time.Time
	// Limit keeps only the newest Limit entries (when > 0).
	Limit int
}

const auditCols = `seq, at, principal, method, remote, action, subject, detail, prev_hash, hash`

func scanAudit(sc interface{ Scan(...any) error }) (AuditEntry, error) {
	var e AuditEntry
	if err := sc.Scan(&e.Seq, &e.at, &e.Principal, &e.Method, &e.Remote, &e.Action, &e.Subject, &e.Detail, &e.PrevHash, &e.Hash); err != nil {
		return AuditEntry{}, err
	}
	// A time that does not parse (an edited row) is left zero; VerifyAudit
	// reports the row, whose hash covers the text.
	e.At, _ = time.Parse(time.RFC3339Nano, e.at)
	return e, nil
}

// AuditEntries lists the audit entries f selects, oldest first.
func (s *Store) AuditEntries(ctx context.Context, f AuditFilter) ([]AuditEntry, error) {
	var (
		where []string
		args  []any
	)
	if f.Subject != "" {
		c, name := subjectref.Split(f.Subject)
		if c == subjectref.DefaultContext {
			where = append(where, `subject IN (?, ?)`)
			args = append(args, name, ":.:"+name)
		} else {
			where = append(where, `subject = ?`)
			args = append(args, f.Subject)
		}
	}
	if f.Principal != "" {
		where = append(where, `principal = ?`)
		args = append(args, f.Principal)
	}
	if !f.Since.IsZero() {
		where = append(where, `at >= ?`)
		args = append(args, f.Since.UTC().Format(auditTime))
	}
	if !f.Until.IsZero() {
		where = append(where, `at <= ?`)
		args = append(args, f.Until.UTC().Format(auditTime))
	}
	query := `SELECT ` + auditCols + ` FROM audit_log`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, ` AND `)
	}
	query += ` ORDER BY seq DESC`
	if f.Limit > 0 {
		query += ` LIMIT ` + strconv.Itoa(f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return nil, fmt.Errorf("read the audit log: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the audit log: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// AuditReport is the outcome of VerifyAudit.
type AuditReport struct {
	// Entries is the number of entries found intact, in order from the
	// first; all of them when the chain holds.
	Entries int
	// Head is the newest entry's hash as stored (64 zeros for an empty
	// log): the value to record elsewhere and compare later.
	Head string
	// BadSeq is the seq of the first entry that breaks the chain, 0 when
	// none does; Problem says how it breaks it.
	BadSeq  int64
	Problem string
}

// OK reports whether the chain holds.
func (r AuditReport) OK() bool { return r.Problem == "" }

// VerifyAudit checks the audit log's chain from the first entry: that
// seqs run 1, 2, 3... without a gap, that each entry's hash matches its
// contents, and that each entry's prev_hash is the hash of the one before
// it (64 zeros for the first). An entry edited, inserted or removed in
// the database breaks the chain there, and the report names the first
// such entry.
//
// Removing the newest entries cannot be detected by the chain alone: what
// is left is a valid, shorter chain. That is why the report gives the
// head hash: record it elsewhere (a ticket, a build log, another system)
// and compare it later (msgcontract-ops registry audit verify
// --expect-head).
func (s *Store) VerifyAudit(ctx context.Context) (AuditReport, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+auditCols+` FROM audit_log ORDER BY seq`)
	if err != nil {
		return AuditReport{}, fmt.Errorf("read the audit log: %w", err)
	}
	defer rows.Close()
	r := AuditReport{Head: zeroHash}
	prev := AuditEntry{Hash: zeroHash}
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return AuditReport{}, fmt.Errorf("read the audit log: %w", err)
		}
		r.Head = e.Hash
		if r.Problem != "" {
			continue // read on for the head
		}
		want := prev.Seq + 1
		switch {
		case e.Seq != want && prev.Seq == 0:
			r.BadSeq, r.Problem = want, fmt.Sprintf("entry %d is missing (the log starts at entry %d)", want, e.Seq)
		case e.Seq != want:
			r.BadSeq, r.Problem = want, fmt.Sprintf("entry %d is missing (entries jump from %d to %d)", want, prev.Seq, e.Seq)
		case e.hash() != e.Hash:
			r.BadSeq, r.Problem = e.Seq, fmt.Sprintf("entry %d was altered: its hash does not match its contents", e.Seq)
		case e.PrevHash != prev.Hash && prev.Seq == 0:
			r.BadSeq, r.Problem = e.Seq, fmt.Sprintf("entry %d does not start the chain: its prev_hash is not 64 zeros", e.Seq)
		case e.PrevHash != prev.Hash:
			r.BadSeq, r.Problem = e.Seq, fmt.Sprintf("entry %d does not follow entry %d: prev_hash differs", e.Seq, prev.Seq)
		default:
			r.Entries++
			prev = e
		}
	}
	if err := rows.Err(); err != nil {
		return AuditReport{}, fmt.Errorf("read the audit log: %w", err)
	}
	return r, nil
}
