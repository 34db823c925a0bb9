package model

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/runtime-go/optionspb"
)

// TestExtForms: ext reads an option however its options message holds it:
// typed (decoded with the option types linked in, as the plugin's
// descriptors), as unknown fields (protocompile), or through a dynamic
// extension type; and reports it absent from options without it.
func TestExtForms(t *testing.T) {
	t.Parallel()
	want := &optionspb.Event{Topic: "orders", EventType: "PAID", BizKey: "{id}"}
	typed := &descriptorpb.MessageOptions{Deprecated: proto.Bool(true)}
	proto.SetExtension(typed, optionspb.E_Event, want)
	raw, err := proto.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	unknown := &descriptorpb.MessageOptions{}
	unknown.ProtoReflect().SetUnknown(protoreflect.RawFields(raw))
	dynamic := &descriptorpb.MessageOptions{}
	xt := dynamicpb.NewExtensionType(optionspb.E_Event.TypeDescriptor().Descriptor())
	dm := dynamicpb.NewMessage(xt.TypeDescriptor().Message())
	if err := proto.Unmarshal(mustMarshal(t, want), dm); err != nil {
		t.Fatal(err)
	}
	dynamic.ProtoReflect().Set(xt.TypeDescriptor(), protoreflect.ValueOfMessage(dm))
	for name, opts := range map[string]*descriptorpb.MessageOptions{"typed": typed, "unknown": unknown, "dynamic": dynamic} {
		got, ok := ext[*optionspb.Event](opts, optionspb.E_Event)
		if !ok || !proto.Equal(got, want) {
			t.Errorf("%s: ext = %v, %v; want %v", name, got, ok, want)
		}
	}
	other := &descriptorpb.EnumOptions{}
	proto.SetExtension(other, optionspb.E_StateMachine, &optionspb.StateMachine{})
	for name, opts := range map[string]proto.Message{
		"no options":      (*descriptorpb.MessageOptions)(nil),
		"empty":           &descriptorpb.MessageOptions{},
		"other fields":    &descriptorpb.MessageOptions{Deprecated: proto.Bool(true)},
		"other extension": other,
	} {
		if got, ok := ext[*optionspb.Event](opts, optionspb.E_Event); ok {
			t.Errorf("%s: ext = %v, want absent", name, got)
		}
	}
	if _, ok := ext[*optionspb.StateMachine](other, optionspb.E_StateMachine); !ok {
		t.Error("a typed state_machine option reads as absent")
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
