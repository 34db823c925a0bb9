// Package redisfilter is a dedup.Prefilter on Redis
// (github.com/redis/go-redis/v9): one string key per committed claim,
// expiring with the claim table's retention.
package redisfilter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/msgcontract/msgcontract/runtime-go/dedup"
)

// Config configures a Filter. Client is required.
type Config struct {
	// Client is any go-redis client (single node, cluster, ring).
	Client redis.UniversalClient
	// Prefix of every key. Defaults to "msgcontract:dedup:".
	Prefix string
	// TTL of a record. Defaults to dedup.DefaultRetention (7 days); keep
	// it at most the claim table's retention.
	TTL time.Duration
}

// Filter implements dedup.Prefilter.
type Filter struct{ cfg Config }

var _ dedup.Prefilter = (*Filter)(nil)

// New validates cfg and returns a Filter.
func New(cfg Config) (*Filter, error) {
	if cfg.Prefix == "" {
		cfg.Prefix = "msgcontract:dedup:"
	}
	if cfg.TTL == 0 {
		cfg.TTL = dedup.DefaultRetention
	}
	var errs []error
	if cfg.Client == nil {
		errs = append(errs, errors.New("redisfilter: Config.Client is required"))
	}
	if cfg.TTL < 0 {
		errs = append(errs, fmt.Errorf("redisfilter: TTL %v is negative", cfg.TTL))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Filter{cfg: cfg}, nil
}

// key joins handler and biz_key; the handler name cannot contain the
// separator's role because it comes first and biz_keys are
// percent-encoded by the producer.
func (f *Filter) key(bizKey, handler string) string {
	return f.cfg.Prefix + handler + "\x00" + bizKey
}

// Lookup implements dedup.Prefilter.
func (f *Filter) Lookup(ctx context.Context, bizKey, handler string) (string, string, bool, error) {
	v, err := f.cfg.Client.Get(ctx, f.key(bizKey, handler)).Result()
	if errors.Is(err, redis.Nil) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("redisfilter: %w", err)
	}
	id, hash, _ := strings.Cut(v, " ")
	return id, hash, true, nil
}

// Record implements dedup.Prefilter.
func (f *Filter) Record(ctx context.Context, bizKey, handler, messageID, payloadHash string) error {
	if err := f.cfg.Client.Set(ctx, f.key(bizKey, handler), messageID+" "+payloadHash, f.cfg.TTL).Err(); err != nil {
		return fmt.Errorf("redisfilter: %w", err)
	}
	return nil
}
