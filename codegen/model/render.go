package model

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/runtime-go/bizkey"
)

// RenderBizKey renders the event's biz_key from m by DESIGN.md's rules,
// using the same builder as generated Go producers. Errors are
// *bizkey.Error with code EMPTY_FIELD or KEY_TOO_LONG.
func (e *Event) RenderBizKey(m protoreflect.Message) (string, error) {
	var b bizkey.Builder
	for _, part := range e.BizKey {
		if !part.IsPlaceholder() {
			b.Literal(part.Literal)
			continue
		}
		cur := m
		ok := true
		for _, fd := range part.Fields[:len(part.Fields)-1] {
			if !cur.Has(fd) {
				ok = false
				break
			}
			cur = cur.Get(fd).Message()
		}
		leaf := part.Leaf()
		if !ok || (leaf.HasPresence() && !cur.Has(leaf)) {
			b.Fail(part.Path)
			continue
		}
		appendValue(&b, part.Path, leaf, cur.Get(leaf))
	}
	return b.Key()
}

func appendValue(b *bizkey.Builder, path string, fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		b.String(path, v.String())
	case protoreflect.BoolKind:
		b.Bool(v.Bool())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			b.Enum(string(ev.Name()))
		} else {
			b.Int(int64(v.Enum())) // an open enum holding an unknown number
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		b.Uint(v.Uint())
	default: // every signed integer kind
		b.Int(v.Int())
	}
}
