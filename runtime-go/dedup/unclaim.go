package dedup

import (
	"context"
	"database/sql"
	"fmt"
)

// Unclaim deletes c's claim in tx, the transaction that made it (Claim or
// ClaimAll with Claimed true), when the message it claimed for failed
// while others in tx go on: the claim then never commits, and the retry
// claims the key afresh. A key claimed by another message is left alone.
func (s *Store) Unclaim(ctx context.Context, tx *sql.Tx, c Claim) error {
	if _, err := tx.ExecContext(ctx, s.unclaim, c.BizKey, c.Handler, c.MessageID); err != nil {
		return fmt.Errorf("dedup: unclaim: %w", err)
	}
	return nil
}
