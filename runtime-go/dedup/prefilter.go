package dedup

import "context"

// Prefilter is an optional fast path in front of the claim table, such as
// Redis. It only ever skips work for keys whose claim it has seen
// committed: the consumer records a claim after its transaction commits
// (or after the table reported it already committed), and never before.
// The claim table stays the authority; a prefilter that loses its data
// costs only database round trips.
type Prefilter interface {
	// Lookup returns the message id and payload hash recorded for
	// (bizKey, handler), and whether a record exists.
	Lookup(ctx context.Context, bizKey, handler string) (messageID, payloadHash string, found bool, err error)
	// Record notes that the claim of (bizKey, handler) is committed.
	Record(ctx context.Context, bizKey, handler, messageID, payloadHash string) error
}
