package backoff

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

func TestDelay(t *testing.T) {
	t.Parallel()
	design := Policy{BaseMs: 1000, Multiplier: 2, JitterMs: 1000, MaxDelayMs: 60000, MaxRetries: 6}
	frac := Policy{BaseMs: 200, Multiplier: 1.5, JitterMs: 100, MaxDelayMs: 5000, MaxRetries: 8}
	capped := Policy{BaseMs: 1000, Multiplier: 3, JitterMs: 0, MaxDelayMs: 10000, MaxRetries: 10}
	tests := []struct {
		name  string
		p     Policy
		retry int
		u     float64
		want  int64
	}{
		{"design r1 u0", design, 1, 0, 1000},
		{"design r3 u.5", design, 3, 0.5, 4500},
		{"design r6 u.9999", design, 6, 0.9999, 32999},
		{"fractional r2", frac, 2, 0, 300},
		{"fractional r5 floors", frac, 5, 0, 1012}, // 200,300,450,675,1012.5→1012
		{"fractional r8", frac, 8, 0, 3415},
		{"cap reached", capped, 3, 0, 9000},
		{"cap applied", capped, 4, 0, 10000},
		{"cap stays", capped, 10, 0, 10000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.p.Delay(tc.retry, tc.u); got != tc.want {
				t.Errorf("Delay(%d, %v) = %d, want %d", tc.retry, tc.u, got, tc.want)
			}
		})
	}
}

func TestBaseDelayNotCappedAtFirstRetry(t *testing.T) {
	t.Parallel()
	p := Policy{BaseMs: 5000, Multiplier: 2, MaxDelayMs: 1000, MaxRetries: 3}
	if got := p.BaseDelay(1); got != 5000 {
		t.Errorf("d(1) = %d, want 5000: DESIGN.md caps from d(2) on", got)
	}
	if got := p.BaseDelay(2); got != 1000 {
		t.Errorf("d(2) = %d, want 1000", got)
	}
}

func TestDeadLetterAndWorstCase(t *testing.T) {
	t.Parallel()
	if Default.DeadLetter(6) || !Default.DeadLetter(7) {
		t.Error("with 6 retries, retry 6 runs and retry 7 dead-letters")
	}
	base, jitter := Default.WorstCase()
	if base.Seconds() != 63 || jitter.Seconds() != 6 {
		t.Errorf("WorstCase = %v + %v, want 63s + 6s", base, jitter)
	}
	if err := (Policy{BaseMs: 1, Multiplier: 0.5, MaxRetries: 31}).Validate(); err == nil {
		t.Error("Validate accepted multiplier 0.5 and 31 retries")
	}
}

func TestValidateNamesEachField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Policy
		want map[string]error // field -> sentinel
	}{
		{"default", Default, map[string]error{}},
		{"negative delays", Policy{BaseMs: -1, JitterMs: -2, MaxDelayMs: -3, Multiplier: 2},
			map[string]error{"base_delay": ErrNegative, "jitter": ErrNegative, "max_delay": ErrNegative}},
		{"multiplier and retries", Policy{BaseMs: 1, MaxDelayMs: 1, Multiplier: 0.5, MaxRetries: 31},
			map[string]error{"multiplier": ErrMultiplier, "max_retries": ErrMaxRetries}},
		{"infinite multiplier, negative retries", Policy{Multiplier: math.Inf(1), MaxRetries: -1},
			map[string]error{"multiplier": ErrMultiplier, "max_retries": ErrMaxRetries}},
		{"cap below base", Policy{BaseMs: 2000, MaxDelayMs: 1000, Multiplier: 2},
			map[string]error{"max_delay": ErrMaxBelowBase}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := map[string]error{}
			if err := tt.p.Validate(); err != nil {
				for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
					var fe *FieldError
					if !errors.As(e, &fe) {
						t.Fatalf("%v is not a *FieldError", e)
					}
					if !errors.Is(e, fe.Err) || fe.Error() == "" {
						t.Errorf("%s: %v does not unwrap to its sentinel or has no message", fe.Field, e)
					}
					got[fe.Field] = fe.Err
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("fields %v, want %v", got, tt.want)
			}
		})
	}
}
