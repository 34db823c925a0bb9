// Package backoff computes retry delays by DESIGN.md's formula, in integer
// milliseconds, iterated (never pow) so that Go, Java and Python agree to the
// millisecond:
//
//	d(1) = base, d(n) = min(max, floor(d(n-1) * multiplier))
//	delay(n) = d(n) + floor(jitter * u), u uniform in [0,1)
package backoff

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// MaxRetriesLimit is the largest max_retries a contract may set.
const MaxRetriesLimit = 30

// Policy is a resolved retry policy. The zero value is not useful; use
// Default or values from a contract.
type Policy struct {
	BaseMs     int64
	Multiplier float64
	JitterMs   int64
	MaxDelayMs int64
	MaxRetries int
}

// Default is the built-in policy: 1s base, x2, 1s jitter, 60s cap, 6
// retries (63 s of delays plus up to 6 s of jitter).
var Default = Policy{BaseMs: 1000, Multiplier: 2, JitterMs: 1000, MaxDelayMs: 60000, MaxRetries: 6}

// Sentinels that a Validate error's FieldErrors unwrap to.
var (
	// ErrNegative: a delay is below zero.
	ErrNegative = errors.New("negative delay")
	// ErrMultiplier: the multiplier is not a finite number >= 1.
	ErrMultiplier = errors.New("multiplier out of range")
	// ErrMaxRetries: max retries is outside 0..MaxRetriesLimit.
	ErrMaxRetries = errors.New("max retries out of range")
	// ErrMaxBelowBase: the cap is below the first delay.
	ErrMaxBelowBase = errors.New("max delay below base delay")
)

// FieldError is one problem of a Policy: which field, as contracts spell
// it (base_delay, jitter, max_delay, multiplier, max_retries), and a
// message that says what to do. It unwraps to one of the Err sentinels.
type FieldError struct {
	Field string
	Err   error
	Msg   string
}

func (e *FieldError) Error() string { return e.Msg }
func (e *FieldError) Unwrap() error { return e.Err }

// Validate reports every problem of p joined into one error, each a
// *FieldError. It is the one statement of what a valid policy is: the
// runtime calls it when a handler is registered, and msgcontract lint
// calls it on every policy of a contract, turning each FieldError into a
// diagnostic at the field's position.
func (p Policy) Validate() error {
	var errs []error
	add := func(field string, sentinel error, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Err: sentinel, Msg: fmt.Sprintf(format, args...)})
	}
	for _, d := range []struct {
		field string
		ms    int64
	}{{"base_delay", p.BaseMs}, {"jitter", p.JitterMs}, {"max_delay", p.MaxDelayMs}} {
		if d.ms < 0 {
			add(d.field, ErrNegative, "%s %dms is negative", d.field, d.ms)
		}
	}
	if !(p.Multiplier >= 1) || math.IsInf(p.Multiplier, 0) {
		add("multiplier", ErrMultiplier, "multiplier %v must be a finite number >= 1", p.Multiplier)
	}
	if p.MaxRetries < 0 || p.MaxRetries > MaxRetriesLimit {
		add("max_retries", ErrMaxRetries, "max_retries %d is outside 0..%d; past %d retries the wait is years, dead-letter instead",
			p.MaxRetries, MaxRetriesLimit, MaxRetriesLimit)
	}
	if p.MaxDelayMs >= 0 && p.BaseMs >= 0 && p.MaxDelayMs < p.BaseMs {
		add("max_delay", ErrMaxBelowBase, "max_delay %dms is below base_delay %dms; raise max_delay or lower base_delay",
			p.MaxDelayMs, p.BaseMs)
	}
	return errors.Join(errs...)
}

// BaseDelay returns d(n), the delay of retry n (1-based) without jitter.
func (p Policy) BaseDelay(n int) int64 {
	if n < 1 {
		return 0
	}
	d := p.BaseMs // d(1) is never capped: DESIGN.md's formula caps from d(2) on
	for i := 2; i <= n; i++ {
		next := math.Floor(float64(d) * p.Multiplier)
		if next >= float64(p.MaxDelayMs) {
			d = p.MaxDelayMs
		} else {
			d = int64(next)
		}
	}
	return d
}

// Delay returns the delay of retry n for the uniform sample u in [0,1).
func (p Policy) Delay(n int, u float64) int64 {
	return p.BaseDelay(n) + int64(math.Floor(float64(p.JitterMs)*u))
}

// DeadLetter reports whether retry n is past the policy: the message must be
// dead-lettered instead.
func (p Policy) DeadLetter(n int) bool { return n > p.MaxRetries }

// Step is one row of a retry schedule.
type Step struct {
	Retry      int
	Delay      time.Duration // d(n)
	MaxJitter  time.Duration // d(n) + the largest jitter
	Cumulative time.Duration // sum of d(1..n)
	CumMax     time.Duration // sum of d(1..n) with the largest jitter each
}

// Schedule lists every retry of the policy with cumulative times.
func (p Policy) Schedule() []Step {
	steps := make([]Step, 0, p.MaxRetries)
	var cum, cumMax int64
	for n := 1; n <= p.MaxRetries; n++ {
		d := p.BaseDelay(n)
		cum += d
		cumMax += d + p.JitterMs
		steps = append(steps, Step{
			Retry:      n,
			Delay:      ms(d),
			MaxJitter:  ms(d + p.JitterMs),
			Cumulative: ms(cum),
			CumMax:     ms(cumMax),
		})
	}
	return steps
}

// WorstCase returns the total time of all retries without jitter and the
// extra time jitter may add at most.
func (p Policy) WorstCase() (base, jitter time.Duration) {
	var sum int64
	for n := 1; n <= p.MaxRetries; n++ {
		sum += p.BaseDelay(n)
	}
	return ms(sum), ms(p.JitterMs * int64(p.MaxRetries))
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
