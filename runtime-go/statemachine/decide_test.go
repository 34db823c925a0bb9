package statemachine_test

import (
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/statemachine"
)

type state int32

const (
	unset state = iota
	paying
	paid
	refunded
	unknown state = 99
)

func TestCanTransit(t *testing.T) {
	t.Parallel()
	preds := map[state][]state{unset: nil, paying: nil, paid: {paying}, refunded: {paid}}
	tests := []struct {
		from, to state
		want     statemachine.Transit
	}{
		{paying, paid, statemachine.Allowed},
		{paid, refunded, statemachine.Allowed},
		{paying, refunded, statemachine.Illegal},
		{paid, paying, statemachine.Illegal},
		{paid, paid, statemachine.Duplicate},
		{unset, unset, statemachine.Duplicate},
		{unknown, unknown, statemachine.Illegal},
		{unknown, paid, statemachine.Illegal},
		{paying, unknown, statemachine.Illegal},
	}
	for _, tc := range tests {
		if got := statemachine.CanTransit(preds, tc.from, tc.to); got != tc.want {
			t.Errorf("CanTransit(%d, %d) = %s, want %s", tc.from, tc.to, got, tc.want)
		}
	}
}
