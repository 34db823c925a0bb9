package java

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// nestFeature is a FeatureSet setting pb.java's nest_in_file_class to v, as
// the loader keeps it: an unknown extension field.
func nestFeature(v uint64) *descriptorpb.FeatureSet {
	var java []byte
	java = protowire.AppendTag(java, nestInFileClassField, protowire.VarintType)
	java = protowire.AppendVarint(java, v)
	var raw []byte
	raw = protowire.AppendTag(raw, javaFeaturesField, protowire.BytesType)
	raw = protowire.AppendBytes(raw, java)
	fs := &descriptorpb.FeatureSet{}
	if err := proto.Unmarshal(raw, fs); err != nil {
		panic(err)
	}
	return fs
}

func editionFile(t *testing.T, name string, ed descriptorpb.Edition, opts *descriptorpb.FileOptions, msgs ...*descriptorpb.DescriptorProto) protoreflect.FileDescriptor {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String(name), Package: proto.String("shop.v1"), Options: opts, MessageType: msgs,
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Status"),
			Value: []*descriptorpb.EnumValueDescriptorProto{{Name: proto.String("STATUS_UNSPECIFIED"), Number: proto.Int32(0)}}}},
	}
	switch ed {
	case descriptorpb.Edition_EDITION_PROTO3:
		fdp.Syntax = proto.String("proto3")
	default:
		fdp.Syntax, fdp.Edition = proto.String("editions"), ed.Enum()
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

func msg(name string, nest *descriptorpb.FeatureSet) *descriptorpb.DescriptorProto {
	m := &descriptorpb.DescriptorProto{Name: proto.String(name),
		NestedType: []*descriptorpb.DescriptorProto{{Name: proto.String("Inner")}}}
	if nest != nil {
		m.Options = &descriptorpb.MessageOptions{Features: nest}
	}
	return m
}

// TestEditionClassNames holds the Java classes protoc 36.2 writes for each
// case (its --java_out listing), the contract class msgcontract adds beside
// them, and where each type's class lands.
func TestEditionClassNames(t *testing.T) {
	multi := &descriptorpb.FileOptions{JavaMultipleFiles: proto.Bool(true)}
	for _, tc := range []struct {
		name                   string
		fd                     func(*testing.T) protoreflect.FileDescriptor
		outer, contract        string
		payEvent, inner, state string
	}{
		{"proto3 nests in the outer class", func(t *testing.T) protoreflect.FileDescriptor {
			return editionFile(t, "shop/pay_event.proto", descriptorpb.Edition_EDITION_PROTO3, nil, msg("PayEvent", nil))
		}, "PayEventOuterClass", "PayEventContract", "shop.v1.PayEventOuterClass.PayEvent", "shop.v1.PayEventOuterClass.PayEvent.Inner", "shop.v1.PayEventOuterClass.Status"},
		{"2023 with java_multiple_files", func(t *testing.T) protoreflect.FileDescriptor {
			return editionFile(t, "shop/pay.proto", descriptorpb.Edition_EDITION_2023, multi, msg("PayEvent", nil))
		}, "Pay", "PayContract", "shop.v1.PayEvent", "shop.v1.PayEvent.Inner", "shop.v1.Status"},
		{"2024 does not nest and appends Proto", func(t *testing.T) protoreflect.FileDescriptor {
			return editionFile(t, "shop/pay_event.proto", descriptorpb.Edition_EDITION_2024, nil, msg("PayEvent", nil))
		}, "PayEventProto", "PayEventContract", "shop.v1.PayEvent", "shop.v1.PayEvent.Inner", "shop.v1.Status"},
		{"2024 contract class steps aside from a top-level message", func(t *testing.T) protoreflect.FileDescriptor {
			return editionFile(t, "shop/pay.proto", descriptorpb.Edition_EDITION_2024, nil, msg("PayEvent", nil), msg("PayContract", nil))
		}, "PayProto", "PayContract_", "shop.v1.PayEvent", "shop.v1.PayEvent.Inner", "shop.v1.Status"},
		{"2024 nest_in_file_class = YES on a message", func(t *testing.T) protoreflect.FileDescriptor {
			return editionFile(t, "shop/pay.proto", descriptorpb.Edition_EDITION_2024, nil, msg("PayEvent", nestFeature(nestYes)))
		}, "PayProto", "PayContract", "shop.v1.PayProto.PayEvent", "shop.v1.PayProto.PayEvent.Inner", "shop.v1.Status"},
		{"2024 with java_outer_classname", func(t *testing.T) protoreflect.FileDescriptor {
			return editionFile(t, "shop/x_y2z.proto", descriptorpb.Edition_EDITION_2024,
				&descriptorpb.FileOptions{JavaOuterClassname: proto.String("Payments")}, msg("PayEvent", nil))
		}, "Payments", "PaymentsContract", "shop.v1.PayEvent", "shop.v1.PayEvent.Inner", "shop.v1.Status"},
		{"2024 file name with digits", func(t *testing.T) protoreflect.FileDescriptor {
			return editionFile(t, "shop/x_y2z.proto", descriptorpb.Edition_EDITION_2024, nil, msg("PayEvent", nil))
		}, "XY2ZProto", "XY2ZContract", "shop.v1.PayEvent", "shop.v1.PayEvent.Inner", "shop.v1.Status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd := tc.fd(t)
			m := fd.Messages().ByName("PayEvent")
			got := []string{OuterClass(fd), ContractClass(fd), ClassName(m), ClassName(m.Messages().Get(0)), ClassName(fd.Enums().Get(0))}
			want := []string{tc.outer, tc.contract, tc.payEvent, tc.inner, tc.state}
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("got %q, want %q (outer, contract, PayEvent, Inner, Status: %q)", got[i], want[i], got)
				}
			}
		})
	}
}
