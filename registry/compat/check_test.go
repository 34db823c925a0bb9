package compat_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/compat"
)

const header = `syntax = "proto3";
package t.v1;
import "msgcontract/v1/options.proto";
`

// load compiles one schema held in memory; a body without a syntax line
// gets the proto3 header.
func load(t testing.TB, src string) *model.Set {
	t.Helper()
	if !strings.HasPrefix(src, "syntax") {
		src = header + src
	}
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"t.proto": src}}, "t.proto")
	if err != nil {
		t.Fatalf("schema does not compile: %v\n%s", err, src)
	}
	return set
}

// The contract used by the CONTRACT cases; each case replaces parts of it.
const (
	defaults = `option (msgcontract.v1.defaults) = {
  error_ranges: [
    { from: 40000 to: 49999 retryable: false name: "business" },
    { from: 50000 to: 59999 retryable: true name: "system" }
  ]
  unclassified: RETRYABLE
};
`
	states = `enum S {
  option (msgcontract.v1.state_machine) = {};
  S_UNSPECIFIED = 0;
  A = 1;
  B = 2 [(msgcontract.v1.transition) = { from: ["A"] }];
  C = 3 [(msgcontract.v1.transition) = { from: ["A", "B"] }];
}
`
	event = `message E {
  option (msgcontract.v1.event) = {
    topic: "orders" event_type: "E_DONE" biz_key: "id:{id}" target_state: "S.B"
  };
  string id = 1;
  int64 n = 2;
}
`
	contractBase = defaults + states + event
)

func replace(s string, pairs ...string) string { return strings.NewReplacer(pairs...).Replace(s) }

func lines(vs []compat.Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintln(&b, v)
	}
	return b.String()
}
