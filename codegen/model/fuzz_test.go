package model_test

import (
	"context"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// FuzzLoad feeds arbitrary contract text through compile, option reading,
// resolution and rendering of positions: it may fail, never panic.
func FuzzLoad(f *testing.F) {
	f.Add(kindsProto)
	f.Add(`syntax = "proto3"; import "msgcontract/v1/options.proto";
message E { option (msgcontract.v1.event) = { topic: "t" event_type: "E" biz_key: "{a.b}" target_state: "S.X" }; M a = 1; }
message M { repeated string b = 1; }
enum S { option (msgcontract.v1.state_machine) = {}; S0 = 0; X = 1 [(msgcontract.v1.transition) = { from: ["S0", "Y"] }]; }`)
	f.Add(`syntax = "proto3"; import "msgcontract/v1/options.proto";
option (msgcontract.v1.defaults).retry.base_delay = "x";
option (msgcontract.v1.defaults) = { error_ranges { from: 5 to: 1 } error_ranges { from: 0 to: 9 } };`)
	f.Fuzz(func(t *testing.T, src string) {
		set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"f.proto": src}}, "f.proto")
		if err != nil {
			return
		}
		for _, d := range set.Diagnostics {
			_ = d.String()
		}
	})
}
