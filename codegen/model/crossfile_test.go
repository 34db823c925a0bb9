package model_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/codegen/model"
)

const statesProto = `syntax = "proto3";
package shop.states.v1;
import "msgcontract/v1/options.proto";

enum OrderState {
  option (msgcontract.v1.state_machine) = {};
  ORDER_STATE_UNSPECIFIED = 0;
  PAYING = 1;
  PAID = 2 [(msgcontract.v1.transition) = { from: ["PAYING"] }];
}
enum Plain { PLAIN_UNSPECIFIED = 0; ONE = 1; }
`

const eventsProto = `syntax = "proto3";
package shop.events.v1;
import "msgcontract/v1/options.proto";
import "shop/states/v1/states.proto";

message Paid {
  option (msgcontract.v1.event) = {
    topic: "t" event_type: "PAID" biz_key: "{id}"
    target_state: "shop.states.v1.OrderState.PAID"
  };
  string id = 1;
}
`

// TestTargetStateInImportedFile: a target_state may name a state machine
// of an imported file that is not itself being generated, as in a build
// that generates one package at a time.
func TestTargetStateInImportedFile(t *testing.T) {
	t.Parallel()
	src := map[string]string{"shop/states/v1/states.proto": statesProto, "shop/events/v1/events.proto": eventsProto}
	set, err := model.Load(context.Background(), model.Config{Sources: src}, "shop/events/v1/events.proto")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Diagnostics) > 0 {
		t.Fatalf("diagnostics:\n%v", set.Diagnostics)
	}
	if len(set.Files) != 1 {
		t.Fatalf("%d files, want only the named one", len(set.Files))
	}
	ts := set.Event("shop.events.v1.Paid").TargetState
	if ts == nil || ts.Machine.Desc.FullName() != "shop.states.v1.OrderState" || ts.Value.Name() != "PAID" {
		t.Fatalf("target state = %+v", ts)
	}

	// The same through descriptors only, as protoc hands them to a plugin.
	fset, err := model.FromFiles(plain(t, set.Files[0].Desc))
	if err != nil {
		t.Fatal(err)
	}
	if len(fset.Diagnostics) > 0 || fset.Event("shop.events.v1.Paid").TargetState == nil {
		t.Fatalf("from descriptors: diagnostics %v, target %v", fset.Diagnostics, fset.Event("shop.events.v1.Paid").TargetState)
	}
}

// TestDescriptorDiagnosticsArePositioned: without an AST (the plugin's
// case) a diagnostic still names the file and, from source info, the line
// and column of the option statement the finding is in.
func TestDescriptorDiagnosticsArePositioned(t *testing.T) {
	t.Parallel()
	bad := strings.Replace(eventsProto, "OrderState.PAID", "Plain.ONE", 1)
	src := map[string]string{"shop/states/v1/states.proto": statesProto, "shop/events/v1/events.proto": bad}
	set, err := model.Load(context.Background(), model.Config{Sources: src}, "shop/events/v1/events.proto")
	if err != nil {
		t.Fatal(err)
	}
	fset, err := model.FromFiles(plain(t, set.Files[0].Desc))
	if err != nil {
		t.Fatal(err)
	}
	if len(fset.Diagnostics) != 1 {
		t.Fatalf("diagnostics = %v, want one", fset.Diagnostics)
	}
	d := fset.Diagnostics[0]
	if d.Rule != "TARGET_STATE_NOT_MACHINE" || d.Pos.File != "shop/events/v1/events.proto" || d.Pos.Line != 7 || d.Pos.Col != 3 {
		t.Fatalf("diagnostic = %v, want TARGET_STATE_NOT_MACHINE at shop/events/v1/events.proto:7:3 (the option statement)", d)
	}
}

// plain rebuilds fd and its imports from descriptor protos (source info
// kept, no AST), as protoc's CodeGeneratorRequest carries them.
func plain(t *testing.T, fd protoreflect.FileDescriptor) protoreflect.FileDescriptor {
	t.Helper()
	fds := &descriptorpb.FileDescriptorSet{}
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		for i := 0; i < f.Imports().Len(); i++ {
			add(f.Imports().Get(i).FileDescriptor)
		}
		fds.File = append(fds.File, protodesc.ToFileDescriptorProto(f))
	}
	add(fd)
	files, err := protodesc.NewFiles(fds)
	if err != nil {
		t.Fatal(err)
	}
	out, err := files.FindFileByPath(fd.Path())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDescriptorDiagnosticsPointAtOptionStatements: without an AST, a
// finding in a file's defaults, a message's event or an enum value's
// transition points at that option statement (where source info has one),
// not at the file's start or the element's declaration.
func TestDescriptorDiagnosticsPointAtOptionStatements(t *testing.T) {
	t.Parallel()
	const src = `syntax = "proto3";
package shop.pos.v1;
import "msgcontract/v1/options.proto";

option go_package = "example.com/pos";
option (msgcontract.v1.defaults) = { retry: { jitter: "soon" } };

enum Plain {
  PLAIN_UNSPECIFIED = 0;
  ONE = 1 [(msgcontract.v1.transition) = { from: ["PLAIN_UNSPECIFIED"] }];
}

message Ev {
  string id = 1;
  option (msgcontract.v1.event) = { topic: "t" event_type: "EV" biz_key: "{nope}" };
}
`
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"shop/pos/v1/pos.proto": src}}, "shop/pos/v1/pos.proto")
	if err != nil {
		t.Fatal(err)
	}
	fset, err := model.FromFiles(plain(t, set.Files[0].Desc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"RETRY_DURATION":               "shop/pos/v1/pos.proto:6:1",
		"TRANSITION_NOT_STATE_MACHINE": "shop/pos/v1/pos.proto:10:12",
		"BIZKEY_UNKNOWN_FIELD":         "shop/pos/v1/pos.proto:15:3",
	}
	got := map[string]string{}
	for _, d := range fset.Diagnostics {
		got[d.Rule] = fmt.Sprintf("%s:%d:%d", d.Pos.File, d.Pos.Line, d.Pos.Col)
	}
	for rule, pos := range want {
		if got[rule] != pos {
			t.Errorf("%s at %q, want %s (all: %v)", rule, got[rule], pos, fset.Diagnostics)
		}
	}
}
