// Package dedup is the effectively-once authority: a claim row per
// (biz_key, handler), inserted in the handler's own database transaction.
// The claim commits exactly when the handler's effects commit, and rolls
// back with them, so a failed attempt never blocks its retry.
package dedup

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/ddl"
)

// DefaultTable is the claim table's name.
const DefaultTable = "msg_dedup"

// DefaultRetention is how long claims are kept: duplicates arriving later
// than this are processed again.
const DefaultRetention = 7 * 24 * time.Hour

// Config configures a Store.
type Config struct {
	// DB is the business database; required. Claims live next to the
	// handler's data so they share its transactions.
	DB *sql.DB
	// Dialect of DB; required.
	Dialect sqldb.Dialect
	// Table defaults to DefaultTable.
	Table string
	// ConflictTable holds the key conflicts; defaults to Table + "_conflict"
	// (msg_dedup_conflict).
	ConflictTable string
	// ChainTable holds each message's retry chain (see Advance); defaults
	// to Table + "_chain" (msg_dedup_chain).
	ChainTable string
	// Retention defaults to DefaultRetention.
	Retention time.Duration
}

func (c *Config) setDefaults() {
	if c.Table == "" {
		c.Table = DefaultTable
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.ConflictTable == "" {
		c.ConflictTable = c.Table + "_conflict"
	}
	if c.ChainTable == "" {
		c.ChainTable = c.Table + "_chain"
	}
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate reports every missing or invalid field at once.
func (c *Config) Validate() error {
	var errs []error
	if c.DB == nil {
		errs = append(errs, errors.New("dedup: Config.DB is required"))
	}
	if err := c.Dialect.Validate(); err != nil {
		errs = append(errs, err)
	}
	if !identRE.MatchString(c.Table) {
		errs = append(errs, fmt.Errorf("dedup: table name %q must be a plain SQL identifier", c.Table))
	}
	if !identRE.MatchString(c.ConflictTable) {
		errs = append(errs, fmt.Errorf("dedup: conflict table name %q must be a plain SQL identifier", c.ConflictTable))
	}
	if !identRE.MatchString(c.ChainTable) {
		errs = append(errs, fmt.Errorf("dedup: chain table name %q must be a plain SQL identifier", c.ChainTable))
	}
	if c.Retention < 0 {
		errs = append(errs, fmt.Errorf("dedup: retention %v is negative", c.Retention))
	}
	return errors.Join(errs...)
}

// Store claims (biz_key, handler) pairs.
type Store struct {
	cfg                       Config
	insert, lookup, deleteOld string
	insertMany, unclaim       string
	manyText                  sync.Map // rows -> insertRows's text
	conflict                  conflictSQL
	chain                     chainSQL
}

// New validates cfg and returns a Store. Call Migrate once to create the
// table.
func New(cfg Config) (*Store, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t, d := cfg.Table, cfg.Dialect
	return &Store{
		cfg: cfg,
		insert: "INSERT INTO " + t + " (biz_key, handler, message_id, payload_hash, created_at) " +
			"VALUES ($1, $2, $3, $4, $5)" + d.OnConflictDoNothing("biz_key, handler"),
		lookup: "SELECT message_id, payload_hash, created_at FROM " + t + " WHERE biz_key = $1 AND handler = $2" +
			d.LockingRead(),
		deleteOld:  "DELETE FROM " + t + " WHERE created_at < $1",
		conflict:   newConflictSQL(d, cfg.ConflictTable),
		chain:      newChainSQL(d, cfg.ChainTable),
		insertMany: "INSERT INTO " + t + " (biz_key, handler, message_id, payload_hash, created_at) VALUES ",
		unclaim:    "DELETE FROM " + t + " WHERE biz_key = $1 AND handler = $2 AND message_id = $3",
	}, nil
}

// Key column limits on MySQL, where a key is VARBINARY
// (contracts/sql/mysql.sql): a biz_key of at most MaxBizKeyBytes bytes and a
// handler name or message id of at most MaxNameBytes. The conflict
// table's key (biz_key, handler, message_id) is then 1534 bytes, within
// InnoDB's 3072. SQLite and PostgreSQL take any length.
const (
	MaxBizKeyBytes = 1024
	MaxNameBytes   = 255
)

// Migrate creates the claim, conflict and chain tables and their indexes
// if they do not exist, by the statements of contracts/sql (sqldb/ddl)
// under the configured table names.
func (s *Store) Migrate(ctx context.Context) error {
	stmts, err := ddl.Statements(s.cfg.Dialect, map[string]string{
		DefaultTable:               s.cfg.Table,
		DefaultTable + "_conflict": s.cfg.ConflictTable,
		DefaultTable + "_chain":    s.cfg.ChainTable,
	}, DefaultTable, DefaultTable+"_conflict", DefaultTable+"_chain")
	if err == nil {
		err = sqldb.Migrate(ctx, s.cfg.DB, s.cfg.Dialect, stmts...)
	}
	if err != nil {
		return fmt.Errorf("dedup: migrate: %w", err)
	}
	return nil
}

// Claim is one message's claim.
type Claim struct {
	BizKey, Handler, MessageID string
	// PayloadHash identifies the payload; see HashMessage.
	PayloadHash string
	At          time.Time
}

// Result is the outcome of a claim.
type Result struct {
	// Claimed is true when this transaction now holds the claim.
	Claimed bool
	// Conflict is true when the key was already claimed by a message with
	// a different payload: a producer bug (two messages under one key).
	// The message is still deduplicated.
	Conflict bool
	// PriorMessageID, PriorPayloadHash and PriorClaimedAt describe the
	// existing claim when not Claimed.
	PriorMessageID   string
	PriorPayloadHash string
	PriorClaimedAt   time.Time
}

// Claim inserts c in tx. When the key is already claimed (committed by
// another transaction) it reports Claimed false. On PostgreSQL a
// concurrent uncommitted claim makes Claim wait for that transaction.
func (s *Store) Claim(ctx context.Context, tx *sql.Tx, c Claim) (Result, error) {
	res, err := tx.ExecContext(ctx, s.insert, c.BizKey, c.Handler, c.MessageID, c.PayloadHash, c.At.UnixMilli())
	if err != nil {
		return Result{}, fmt.Errorf("dedup: claim: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Result{}, fmt.Errorf("dedup: claim: %w", err)
	}
	if n == 1 {
		return Result{Claimed: true}, nil
	}
	return s.existing(ctx, tx, c)
}

// existing reads the claim that c lost to.
func (s *Store) existing(ctx context.Context, tx *sql.Tx, c Claim) (Result, error) {
	var prior, hash string
	var at int64
	if err := tx.QueryRowContext(ctx, s.lookup, c.BizKey, c.Handler).Scan(&prior, &hash, &at); err != nil {
		return Result{}, fmt.Errorf("dedup: read existing claim: %w", err)
	}
	return Result{PriorMessageID: prior, PriorPayloadHash: hash, PriorClaimedAt: time.UnixMilli(at),
		Conflict: hash != c.PayloadHash}, nil
}

// Cleanup deletes claims and conflict records older than the retention
// period before now and returns how many claims it deleted.
func (s *Store) Cleanup(ctx context.Context, now time.Time) (int64, error) {
	cutoff := now.Add(-s.cfg.Retention).UnixMilli()
	res, err := s.cfg.DB.ExecContext(ctx, s.deleteOld, cutoff)
	if err != nil {
		return 0, fmt.Errorf("dedup: cleanup: %w", err)
	}
	if _, err := s.cfg.DB.ExecContext(ctx, s.conflict.deleteOld, cutoff); err != nil {
		return 0, fmt.Errorf("dedup: cleanup conflicts: %w", err)
	}
	if _, err := s.cfg.DB.ExecContext(ctx, s.chain.deleteOld, cutoff); err != nil {
		return 0, fmt.Errorf("dedup: cleanup retry chains: %w", err)
	}
	return res.RowsAffected()
}

// Retention is the configured retention period.
func (s *Store) Retention() time.Duration { return s.cfg.Retention }

// claimChunk bounds the rows of one multi-row claim statement (5
// parameters each), well below every dialect's parameter limit.
const claimChunk = 200

// ClaimAll claims cs in tx, with one statement per 200 claims, and
// returns one Result per claim, in cs's order. A key claimed earlier in cs
// (or already committed) makes the later claim not Claimed, with the
// earlier one as its prior claim.
//
// On PostgreSQL the statement returns the keys it inserted. On SQLite and
// MySQL it runs inside a savepoint and counts the rows it inserted: one
// per claim (the common case) settles the chunk; otherwise it is rolled
// back to the savepoint and the chunk is claimed a row at a time. On
// SQLite a CPU profile of bench-runtime's batch mode put this below
// claiming row by row (one statement in key order; the commit writes
// fewer pages), and row by row below the statement with RETURNING.
func (s *Store) ClaimAll(ctx context.Context, tx *sql.Tx, cs []Claim) ([]Result, error) {
	out := make([]Result, len(cs))
	for lo := 0; lo < len(cs); lo += claimChunk {
		chunk := cs[lo:min(lo+claimChunk, len(cs))]
		// Rows go in key order, so concurrent batches on PostgreSQL wait
		// for each other's keys in one order and cannot deadlock.
		order := make([]int, len(chunk))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			return cmp.Or(cmp.Compare(chunk[a].BizKey, chunk[b].BizKey), cmp.Compare(chunk[a].Handler, chunk[b].Handler))
		})
		args := make([]any, 0, 5*len(chunk))
		// A batch's claims mostly share handler and time: each distinct
		// value is boxed into an interface once, not once a row.
		var handler, at any
		for _, j := range order {
			c := chunk[j]
			if h, _ := handler.(string); handler == nil || h != c.Handler {
				handler = c.Handler
			}
			if ms, _ := at.(int64); at == nil || ms != c.At.UnixMilli() {
				at = c.At.UnixMilli()
			}
			args = append(args, c.BizKey, handler, c.MessageID, c.PayloadHash, at)
		}
		if s.cfg.Dialect != sqldb.Postgres {
			if err := s.claimChunkCounted(ctx, tx, s.insertRows(len(chunk)), args, chunk, order, out[lo:]); err != nil {
				return nil, err
			}
			continue
		}
		rows, err := tx.QueryContext(ctx, s.insertRows(len(chunk))+" RETURNING biz_key, handler", args...)
		if err != nil {
			return nil, fmt.Errorf("dedup: claim: %w", err)
		}
		// The first claim of each returned key in cs won it.
		won := map[[2]string]bool{}
		for rows.Next() {
			var k [2]string
			if err := rows.Scan(&k[0], &k[1]); err != nil {
				rows.Close()
				return nil, fmt.Errorf("dedup: claim: %w", err)
			}
			won[k] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("dedup: claim: %w", err)
		}
		for i, c := range chunk {
			if k := [2]string{c.BizKey, c.Handler}; won[k] {
				out[lo+i] = Result{Claimed: true}
				delete(won, k)
				continue
			}
			r, err := s.existing(ctx, tx, c)
			if err != nil {
				return nil, err
			}
			out[lo+i] = r
		}
	}
	return out, nil
}

// insertRows is the claim statement for n rows (its text is kept, so that
// the driver's statement cache finds it again), keeping existing keys.
func (s *Store) insertRows(n int) string {
	if q, ok := s.manyText.Load(n); ok {
		return q.(string)
	}
	var q strings.Builder
	q.WriteString(s.insertMany)
	for i := range n {
		if i > 0 {
			q.WriteString(", ")
		}
		fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d)", 5*i+1, 5*i+2, 5*i+3, 5*i+4, 5*i+5)
	}
	q.WriteString(s.cfg.Dialect.OnConflictDoNothing("biz_key, handler"))
	s.manyText.Store(n, q.String())
	return q.String()
}

// claimChunkCounted claims a chunk without INSERT ... RETURNING (which
// MySQL lacks): the multi-row insert (q, args) runs inside a savepoint,
// and when it affected a row per claim every claim won. Otherwise it is
// rolled back to the savepoint and the chunk is claimed one statement at
// a time, in the same key order.
func (s *Store) claimChunkCounted(ctx context.Context, tx *sql.Tx, q string, args []any, chunk []Claim, order []int,
	out []Result) error {
	const sp = "mc_claim_all"
	if _, err := tx.ExecContext(ctx, "SAVEPOINT "+sp); err != nil {
		return fmt.Errorf("dedup: claim: %w", err)
	}
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("dedup: claim: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("dedup: claim: %w", err)
	}
	if n == int64(len(chunk)) {
		for i := range chunk {
			out[i] = Result{Claimed: true}
		}
		_, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT "+sp)
		return err
	}
	if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+sp); err != nil {
		return fmt.Errorf("dedup: claim: %w", err)
	}
	for _, j := range order {
		r, err := s.Claim(ctx, tx, chunk[j])
		if err != nil {
			return err
		}
		out[j] = r
	}
	return nil
}
