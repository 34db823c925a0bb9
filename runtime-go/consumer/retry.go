package consumer

import (
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// retryEnvelope returns the copy of env to publish for the next retry:
// retry_count+1, not_before = now + delayMs, a bounded last_error and
// first_failed_at set on the first failure. The payload is untouched.
func retryEnvelope(env *envelopepb.Envelope, herr error, code int32, res classify.Classification, now time.Time,
	delayMs int64) *envelopepb.Envelope {
	r := proto.Clone(env).(*envelopepb.Envelope)
	r.RetryCount++
	ms := now.UnixMilli()
	r.NotBefore = ms + delayMs
	r.LastError = &envelopepb.LastError{
		Code: code, Message: truncate(herr.Error(), MaxErrorMessage),
		Retryable: res.Retryable, Range: res.Range, FailedAt: ms,
	}
	if r.FirstFailedAt == 0 {
		r.FirstFailedAt = ms
	}
	return r
}

// truncate cuts s to at most n bytes at a UTF-8 boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// logLine shortens an error message for a log line: its first line, at
// most 160 bytes.
func logLine(s string) string {
	first, _, cut := strings.Cut(s, "\n")
	if short := truncate(first, 160); cut || short != first {
		return short + "…"
	}
	return first
}
