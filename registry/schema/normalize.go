package schema

import (
	"encoding/base64"
	"fmt"
	"sort"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Normalized returns the canonical form of a compiled schema, for
// ?normalize=true: its descriptor (p.Descriptor, which has no source info,
// so no comments or layout) with the imports sorted and every options
// message's fields, custom options included, in field-number order, as a
// base64 FileDescriptorProto. Compiled like any schema sent so, it is
// printed as .proto text by one printer; two schemas that differ only in
// comments, whitespace, the order of imports or the order of options get
// one text, so one id and one version. Declarations (messages, fields,
// enums, services) keep their order: it is part of the descriptor.
func Normalized(p *Parsed) (string, error) {
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := proto.Unmarshal(p.Descriptor, fdp); err != nil {
		return "", fmt.Errorf("normalize %s: %w", p.Name, err)
	}
	sortImports(fdp)
	sortOptions(fdp.ProtoReflect())
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(fdp)
	if err != nil {
		return "", fmt.Errorf("normalize %s: %w", p.Name, err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// sortImports sorts fdp's imports, keeping which are public or weak.
func sortImports(fdp *descriptorpb.FileDescriptorProto) {
	deps := fdp.GetDependency()
	public, weak := map[string]bool{}, map[string]bool{}
	for _, i := range fdp.GetPublicDependency() {
		public[deps[i]] = true
	}
	for _, i := range fdp.GetWeakDependency() {
		weak[deps[i]] = true
	}
	sorted := append([]string(nil), deps...)
	sort.Strings(sorted)
	fdp.Dependency = sorted
	fdp.PublicDependency, fdp.WeakDependency = nil, nil
	for i, d := range sorted {
		if public[d] {
			fdp.PublicDependency = append(fdp.PublicDependency, int32(i))
		}
		if weak[d] {
			fdp.WeakDependency = append(fdp.WeakDependency, int32(i))
		}
	}
}

// sortOptions walks m and puts the unknown fields of every options
// message (custom options the descriptor types do not know, kept as raw
// bytes in the order they were written) in field-number order; a
// deterministic marshal orders the known ones.
func sortOptions(m protoreflect.Message) {
	if raw := m.GetUnknown(); len(raw) > 0 {
		m.SetUnknown(sortedFields(raw))
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil {
			return true
		}
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				sortOptions(l.Get(i).Message())
			}
		case fd.IsMap():
		default:
			sortOptions(v.Message())
		}
		return true
	})
}

// sortedFields returns the wire-format fields in raw stably sorted by
// field number (repeated fields keep their order among themselves).
func sortedFields(raw []byte) []byte {
	type field struct {
		num protowire.Number
		b   []byte
	}
	var fields []field
	for b := raw; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return raw
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return raw
		}
		fields = append(fields, field{num, b[:n+m]})
		b = b[n+m:]
	}
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].num < fields[j].num })
	out := make([]byte, 0, len(raw))
	for _, f := range fields {
		out = append(out, f.b...)
	}
	return out
}
