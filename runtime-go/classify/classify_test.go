package classify

import (
	"fmt"
	"testing"
)

func TestRules(t *testing.T) {
	t.Parallel()
	r := Rules{Ranges: []Range{
		{From: 40000, To: 49999, Retryable: false, Name: "business"},
		{From: 50000, To: 59999, Retryable: true, Name: "system"},
	}, UnclassifiedRetryable: true}
	tests := []struct {
		code int32
		want Classification
	}{
		{39999, Classification{Retryable: true}},
		{40000, Classification{Retryable: false, Range: "business"}},
		{49999, Classification{Retryable: false, Range: "business"}},
		{50000, Classification{Retryable: true, Range: "system"}},
		{50301, Classification{Retryable: true, Range: "system"}},
		{60000, Classification{Retryable: true}},
		{-1, Classification{Retryable: true}},
	}
	for _, tc := range tests {
		if got := r.Code(tc.code); got != tc.want {
			t.Errorf("Code(%d) = %+v, want %+v", tc.code, got, tc.want)
		}
	}
	if got := r.Err(fmt.Errorf("wrapped: %w", NewError(40001, "order closed"))); got.Retryable || got.Range != "business" {
		t.Errorf("wrapped coded error classified %+v", got)
	}
	strict := Rules{UnclassifiedRetryable: false}
	if strict.Err(fmt.Errorf("no code")).Retryable {
		t.Error("error without a code classified retryable under NON_RETRYABLE")
	}
}
