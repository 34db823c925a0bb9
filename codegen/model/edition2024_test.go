package model_test

import (
	"context"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// An edition-2024 contract may bring msgcontract's options in with
// `import option`: its events and state machines are read as with a plain
// import, and findings inside option values keep their positions.
func TestEdition2024OptionImport(t *testing.T) {
	t.Parallel()
	const src = `edition = "2024";
package t.v1;
import option "msgcontract/v1/options.proto";
export enum State {
  option (msgcontract.v1.state_machine) = {};
  STATE_UNSPECIFIED = 0;
  STATE_PAID = 1;
}
export message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}:{n}" target_state: "State.STATE_PAID" };
  string id = 1;
  int32 n = 2;
}
`
	set := load(t, src)
	if set.Event("t.v1.Paid") == nil || len(set.Files[0].StateMachines) != 1 {
		t.Fatalf("events/machines not read through an option import: %+v", set.Files[0])
	}
	bad := strings.Replace(src, "{id}:{n}", "{id}:{missing}", 1)
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"t.proto": bad}}, "t.proto")
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Diagnostics.Error(); !strings.Contains(got, "t.proto:10:") || !strings.Contains(got, "BIZKEY_UNKNOWN_FIELD") {
		t.Errorf("diagnostics = %q; want BIZKEY_UNKNOWN_FIELD inside the option at line 10", got)
	}
}
