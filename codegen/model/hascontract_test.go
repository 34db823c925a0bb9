package model_test

import (
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
)

func TestHasContract(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    model.File
		want bool
	}{
		{"plain", model.File{}, false},
		{"events", model.File{Events: []*model.Event{{}}}, true},
		{"state machines", model.File{StateMachines: []*model.StateMachine{{}}}, true},
		{"both", model.File{Events: []*model.Event{{}}, StateMachines: []*model.StateMachine{{}}}, true},
	} {
		if got := tc.f.HasContract(); got != tc.want {
			t.Errorf("%s: HasContract() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
