package model_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/runtime-go/bizkey"
)

const kindsProto = `syntax = "proto3";
package t.v1;
import "msgcontract/v1/options.proto";

option (msgcontract.v1.defaults) = {
  retry: { base_delay: "2s" max_retries: 3 }
  error_ranges: [{ from: 1 to: 9 retryable: false name: "bad" }]
  unclassified: NON_RETRYABLE
};

enum Color { COLOR_UNSPECIFIED = 0; RED = 1; }

message Inner { string id = 1; Deep deep = 2; }
message Deep { int64 n = 1; }

message Kinds {
  option (msgcontract.v1.event) = {
    topic: "kinds" event_type: "KINDS"
    biz_key: "{s}|{i32}|{i64}|{u32}|{u64}|{si64}|{f32}|{sf64}|{b}|{c}|{inner.id}|{inner.deep.n}|{{lit}}"
    retry: { jitter: "0s" }
  };
  string s = 1; int32 i32 = 2; int64 i64 = 3; uint32 u32 = 4; uint64 u64 = 5;
  sint64 si64 = 6; fixed32 f32 = 7; sfixed64 sf64 = 8; bool b = 9; Color c = 10;
  Inner inner = 11;
}

message Opt {
  option (msgcontract.v1.event) = { topic: "opt" event_type: "OPT" biz_key: "k:{id}:{n}" };
  string id = 1;
  optional int32 n = 2;
}
`

func load(t *testing.T, src string) *model.Set {
	t.Helper()
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"t.proto": src}}, "t.proto")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Diagnostics) > 0 {
		t.Fatalf("unexpected diagnostics:\n%v", set.Diagnostics)
	}
	return set
}

func TestRenderBizKey(t *testing.T) {
	t.Parallel()
	set := load(t, kindsProto)
	kinds, opt := set.Event("t.v1.Kinds"), set.Event("t.v1.Opt")
	tests := []struct {
		name  string
		event *model.Event
		json  string
		want  string
		code  bizkey.Code
	}{
		{"extremes", kinds, `{"s":"a:b","i32":-2147483648,"i64":"-9223372036854775808","u32":4294967295,"u64":"18446744073709551615",
			"si64":"9223372036854775807","f32":0,"sf64":"-1","b":true,"c":"RED","inner":{"id":"x y","deep":{"n":"0"}}}`,
			"a%3Ab|-2147483648|-9223372036854775808|4294967295|18446744073709551615|9223372036854775807|0|-1|true|RED|x%20y|0|{lit}", ""},
		{"zero values and zero enum", kinds, `{"s":"s","inner":{"id":"i","deep":{}}}`,
			"s|0|0|0|0|0|0|0|false|COLOR_UNSPECIFIED|i|0|{lit}", ""},
		{"unset sub-message", kinds, `{"s":"s","inner":{"id":"i"}}`, "", bizkey.EmptyField},
		{"empty string", kinds, `{"inner":{"id":"i","deep":{}}}`, "", bizkey.EmptyField},
		{"optional set to zero", opt, `{"id":"a","n":0}`, "k:a:0", ""},
		{"optional absent", opt, `{"id":"a"}`, "", bizkey.EmptyField},
		{"too long after encoding", opt, `{"id":"` + strings.Repeat("%", 170) + `","n":1}`, "", bizkey.KeyTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := dynamicpb.NewMessage(tc.event.Desc)
			if err := protojson.Unmarshal([]byte(tc.json), m); err != nil {
				t.Fatal(err)
			}
			got, err := tc.event.RenderBizKey(m)
			if tc.code != "" {
				var ke *bizkey.Error
				if !errors.As(err, &ke) || ke.Code != tc.code {
					t.Fatalf("got %q, %v; want %s", got, err, tc.code)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestPoliciesAndRules(t *testing.T) {
	t.Parallel()
	set := load(t, kindsProto)
	kinds, opt := set.Event("t.v1.Kinds"), set.Event("t.v1.Opt")
	// The event's own retry replaces the file default as a whole: unset
	// fields take built-in defaults, not the file's.
	if !kinds.PolicyFromEvent || kinds.Policy.BaseMs != 1000 || kinds.Policy.MaxRetries != 6 || kinds.Policy.JitterMs != 0 {
		t.Errorf("Kinds policy = %+v (from event %v), want built-in defaults with jitter 0", kinds.Policy, kinds.PolicyFromEvent)
	}
	if opt.PolicyFromEvent || opt.Policy.BaseMs != 2000 || opt.Policy.MaxRetries != 3 || opt.Policy.JitterMs != 1000 {
		t.Errorf("Opt policy = %+v, want the file default", opt.Policy)
	}
	r := opt.Rules.Classify()
	if got := r.Code(5); got.Retryable || got.Range != "bad" {
		t.Errorf("code 5 = %+v", got)
	}
	if got := r.Code(10); got.Retryable || got.Range != "" {
		t.Errorf("code 10 under NON_RETRYABLE = %+v", got)
	}
}

func TestStateMachine(t *testing.T) {
	t.Parallel()
	set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{"../../examples/proto"}},
		"../../examples/proto/shop/payment/v1/payment.proto")
	if err != nil {
		t.Fatal(err)
	}
	sm := set.StateMachine("shop.payment.v1.OrderState")
	tests := []struct {
		from, to string
		want     model.Transit
	}{
		{"PAYING", "PAID", model.Allowed},
		{"PAID", "REFUNDING", model.Allowed},
		{"REFUNDING", "REFUNDED", model.Allowed},
		{"PAID", "PAID", model.Duplicate},
		{"PAYING", "REFUNDED", model.Illegal},
		{"REFUNDED", "PAID", model.Illegal},
		{"ORDER_STATE_UNSPECIFIED", "PAYING", model.Illegal},
		{"NOPE", "PAID", model.Illegal},
	}
	for _, tc := range tests {
		if got := sm.CanTransit(tc.from, tc.to); got != tc.want {
			t.Errorf("CanTransit(%s, %s) = %s, want %s", tc.from, tc.to, got, tc.want)
		}
	}
	pay := set.Event("shop.payment.v1.PaySuccess")
	if pay.TargetState == nil || pay.TargetState.Value.Name() != "PAID" || pay.TargetState.Machine != sm {
		t.Errorf("PaySuccess target state not resolved: %+v", pay.TargetState)
	}
}

func TestFromFilesMatchesLoad(t *testing.T) {
	t.Parallel()
	set := load(t, kindsProto)
	again, err := model.FromFiles(set.Files[0].Desc)
	if err != nil {
		t.Fatal(err)
	}
	a, b := set.Event("t.v1.Kinds"), again.Event("t.v1.Kinds")
	if b == nil || a.BizKeyTemplate != b.BizKeyTemplate || a.Policy != b.Policy || len(a.BizKey) != len(b.BizKey) {
		t.Fatalf("FromFiles model differs: %+v vs %+v", a, b)
	}
}

func TestCompileErrorsAreAllReported(t *testing.T) {
	t.Parallel()
	_, err := model.Load(context.Background(), model.Config{Sources: map[string]string{
		"bad.proto": "syntax = \"proto3\";\nmessage A { Unknown1 a = 1; Unknown2 b = 2; }\n",
	}}, "bad.proto")
	var ce *model.CompileError
	if !errors.As(err, &ce) || len(ce.Errors) != 2 {
		t.Fatalf("err = %v, want 2 positioned errors", err)
	}
	if !strings.HasPrefix(ce.Errors[0], "bad.proto:2:") {
		t.Errorf("error not positioned: %q", ce.Errors[0])
	}
}

func TestPositionsUseDisplayPaths(t *testing.T) {
	t.Parallel()
	const proto = "../../examples/proto/shop/payment/v1/payment.proto"
	set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{"../../examples/proto"}}, proto)
	if err != nil {
		t.Fatal(err)
	}
	ev := set.Event("shop.payment.v1.PaySuccess")
	for _, p := range []model.Pos{ev.Pos, ev.OptionPos["biz_key"], ev.Rules.Ranges[0].Pos, set.Files[0].Defaults.Rules.Ranges[1].Pos,
		set.Files[0].StateMachines[0].States[2].Pos} {
		if p.File != proto || p.Line == 0 {
			t.Errorf("position %v, want %s:LINE:COL", p, proto)
		}
	}
}

// TestOptionsThroughPublicImport: a file that sees msgcontract's options
// only through a public import is modelled like one importing them
// directly; a file that cannot see them is skipped, events and all.
func TestOptionsThroughPublicImport(t *testing.T) {
	t.Parallel()
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{
		"reexport.proto": "syntax = \"proto3\";\npackage r;\nimport public \"msgcontract/v1/options.proto\";\n",
		"ev.proto": `syntax = "proto3";
package t;
import "reexport.proto";
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
}`,
		"plain.proto": "syntax = \"proto3\";\npackage p;\nmessage Plain { string id = 1; }\n",
	}}, "ev.proto", "plain.proto")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Diagnostics) > 0 {
		t.Fatal(set.Diagnostics)
	}
	if n := len(set.Files[0].Events); n != 1 {
		t.Fatalf("%d events through a public import, want 1", n)
	}
	if n := len(set.Files[1].Events) + len(set.Files[1].StateMachines); n != 0 {
		t.Fatalf("plain file: %d contract elements", n)
	}
}
