package compat

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The wire and JSON rules: fields, oneofs and enum values of messages and
// enums present in both versions.

func (c *checker) message(o, n protoreflect.MessageDescriptor) {
	ofs, nfs := o.Fields(), n.Fields()
	ni, oi := c.next.fields[n.FullName()], c.prev.fields[o.FullName()]
	for i := 0; i < ofs.Len(); i++ {
		of := ofs.Get(i)
		nf := ni.byNumber[of.Number()]
		if nf != nil {
			c.field(of, nf)
			continue
		}
		elem := string(of.FullName())
		if moved := ni.byName[of.Name()]; moved != nil {
			c.report(FieldNumberChanged, elem, c.pos(moved),
				"field %s changed its number from %d to %d; on the wire it is a different field", elem, of.Number(), moved.Number())
			continue
		}
		at := c.pos(n)
		if !n.ReservedRanges().Has(of.Number()) {
			c.report(FieldDeletedNumberUnreserved, elem, at,
				"field %s (%d) was deleted without reserving its number; add `reserved %d;`", elem, of.Number(), of.Number())
		}
		if !n.ReservedNames().Has(of.Name()) {
			c.report(FieldDeletedNameUnreserved, elem, at,
				"field %s was deleted without reserving its name; add `reserved \"%s\";` so no later field reuses it for other JSON", elem, of.Name())
		}
		if of.Cardinality() == protoreflect.Required {
			c.report(FieldRequiredRemoved, elem, at, "required field %s was deleted; old readers reject data without it", elem)
		}
	}
	for i := 0; i < nfs.Len(); i++ {
		nf := nfs.Get(i)
		if nf.Cardinality() == protoreflect.Required && oi.byNumber[nf.Number()] == nil && oi.byName[nf.Name()] == nil {
			c.report(FieldRequiredAdded, string(nf.FullName()), c.pos(nf),
				"required field %s was added; data written with the old schema lacks it", nf.FullName())
		}
	}
	c.oneofs(o, n, NewReadsOld)
	c.oneofs(n, o, OldReadsNew)
	c.reservedFields(o, n)
	c.jsonFormat(MessageJSONFormatChanged, "message", o, n)
}

// oneofs reports fields of one of to's oneofs that could be set together
// in from. With dir NewReadsOld, to is the new message (fields merged into
// a oneof); with OldReadsNew, to is the old one (fields split out of it).
func (c *checker) oneofs(from, to protoreflect.MessageDescriptor, dir Direction) {
	newMsg := to
	if dir == OldReadsNew {
		newMsg = from
	}
	oos := to.Oneofs()
	for i := 0; i < oos.Len(); i++ {
		oo := oos.Get(i)
		if oo.IsSynthetic() {
			continue
		}
		var members []protoreflect.FieldDescriptor
		for j := 0; j < oo.Fields().Len(); j++ {
			if f := from.Fields().ByNumber(oo.Fields().Get(j).Number()); f != nil {
				members = append(members, f)
			}
		}
		if len(members) < 2 {
			continue
		}
		together := false
		first := realOneof(members[0])
		for _, m := range members {
			if o := realOneof(m); o == nil || first == nil || o.Name() != first.Name() {
				together = true
			}
		}
		if !together {
			continue
		}
		names := make([]string, len(members))
		for k, m := range members {
			names[k] = string(m.Name())
		}
		if dir == NewReadsOld {
			c.report(OneofFieldsMerged, string(oo.FullName()), c.pos(oo),
				"fields %s could be set together and now share oneof %s; new readers keep only the last one", strings.Join(names, ", "), oo.Name())
		} else {
			c.report(OneofFieldsSplit, string(oo.FullName()), c.pos(newMsg),
				"fields %s shared oneof %s and may now be set together; old readers keep only the last one", strings.Join(names, ", "), oo.Name())
		}
	}
}

func realOneof(f protoreflect.FieldDescriptor) protoreflect.OneofDescriptor {
	if o := f.ContainingOneof(); o != nil && !o.IsSynthetic() {
		return o
	}
	return nil
}

func (c *checker) field(of, nf protoreflect.FieldDescriptor) {
	elem := string(nf.FullName())
	// Positions are looked up only for violations: it is the costly part.
	if of.Name() != nf.Name() {
		c.report(FieldRenamed, elem, c.pos(nf), "field %d was renamed from %s to %s; JSON with proto names no longer matches", nf.Number(), of.Name(), nf.Name())
	}
	c.fieldOptions(of, nf)
	oreq, nreq := of.Cardinality() == protoreflect.Required, nf.Cardinality() == protoreflect.Required
	if !oreq && nreq {
		c.report(FieldRequiredAdded, elem, c.pos(nf), "field %s became required; data written with the old schema may lack it", elem)
	}
	if oreq && !nreq {
		c.report(FieldRequiredRemoved, elem, c.pos(nf), "field %s is no longer required; old readers reject new data without it", elem)
	}
	switch {
	case of.IsMap() && nf.IsMap():
		c.fieldType(elem, nf, "map key", of.MapKey(), nf.MapKey())
		c.fieldType(elem, nf, "map value", of.MapValue(), nf.MapValue())
		return
	case of.IsMap() != nf.IsMap():
		c.report(FieldTypeChanged, elem, c.pos(nf), "field %s changed from %s to %s; the JSON form differs", elem, describe(of), describe(nf))
		return
	case of.IsList() != nf.IsList():
		c.report(FieldCardinalityChanged, elem, c.pos(nf), "field %s changed from %s to %s; one side keeps only the last element and the JSON shape differs",
			elem, describe(of), describe(nf))
		return
	}
	c.fieldType(elem, nf, "type", of, nf)
}

// widening lists lossless integer widenings (old kind to new kind).
var widening = map[[2]protoreflect.Kind]bool{
	{protoreflect.Int32Kind, protoreflect.Int64Kind}:   true,
	{protoreflect.Uint32Kind, protoreflect.Uint64Kind}: true,
	{protoreflect.Uint32Kind, protoreflect.Int64Kind}:  true,
	{protoreflect.Sint32Kind, protoreflect.Sint64Kind}: true,
}

// signChange lists changes of signedness within one encoding and width.
var signChange = map[[2]protoreflect.Kind]bool{
	{protoreflect.Int32Kind, protoreflect.Uint32Kind}:     true,
	{protoreflect.Int64Kind, protoreflect.Uint64Kind}:     true,
	{protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind}: true,
	{protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind}: true,
}

func (c *checker) fieldType(elem string, at protoreflect.Descriptor, what string, of, nf protoreflect.FieldDescriptor) {
	ok, nk := of.Kind(), nf.Kind()
	if ok == nk {
		var on, nn string
		switch ok {
		case protoreflect.MessageKind, protoreflect.GroupKind:
			on, nn = string(of.Message().FullName()), string(nf.Message().FullName())
		case protoreflect.EnumKind:
			on, nn = string(of.Enum().FullName()), string(nf.Enum().FullName())
		}
		if c.newName(on) != nn {
			c.report(FieldTypeChanged, elem, c.pos(at), "field %s %s changed from %s to %s", elem, what, on, nn)
		}
		return
	}
	switch {
	case signChange[[2]protoreflect.Kind{ok, nk}] || signChange[[2]protoreflect.Kind{nk, ok}]:
		c.report(FieldSignChanged, elem, c.pos(at), "field %s %s changed from %s to %s; values out of the other's range read back as other numbers in binary and are rejected in JSON",
			elem, what, ok, nk)
	case widening[[2]protoreflect.Kind{ok, nk}]:
		c.report(FieldTypeWidened, elem, c.pos(at), "field %s %s widened from %s to %s; old readers truncate values that do not fit", elem, what, ok, nk)
	case widening[[2]protoreflect.Kind{nk, ok}]:
		c.report(FieldTypeNarrowed, elem, c.pos(at), "field %s %s narrowed from %s to %s; new readers truncate old values that do not fit", elem, what, ok, nk)
	default:
		c.report(FieldTypeChanged, elem, c.pos(at), "field %s %s changed from %s to %s; %s", elem, what, kindName(of), kindName(nf), typeChangeReason(ok, nk))
	}
}

func typeChangeReason(a, b protoreflect.Kind) string {
	if wireClass(a) != wireClass(b) {
		return "the wire encodings differ"
	}
	return "the wire bytes read back differently or the JSON form differs"
}

// wireClass groups kinds by encoding: values of one class share a wire
// type and the same varint flavour.
func wireClass(k protoreflect.Kind) string {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind,
		protoreflect.BoolKind, protoreflect.EnumKind:
		return "varint"
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return "zigzag"
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return "fixed32"
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return "fixed64"
	case protoreflect.GroupKind:
		return "group"
	}
	return "bytes"
}

func kindName(f protoreflect.FieldDescriptor) string {
	switch f.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return string(f.Message().FullName())
	case protoreflect.EnumKind:
		return string(f.Enum().FullName())
	}
	return f.Kind().String()
}

func describe(f protoreflect.FieldDescriptor) string {
	switch {
	case f.IsMap():
		return fmt.Sprintf("map<%s, %s>", kindName(f.MapKey()), kindName(f.MapValue()))
	case f.IsList():
		return "repeated " + kindName(f)
	}
	return "singular " + kindName(f)
}

func (c *checker) enum(o, n protoreflect.EnumDescriptor) {
	if o.IsClosed() != n.IsClosed() {
		c.report(EnumTypeChanged, string(n.FullName()), c.pos(n), "enum %s changed from %s to %s; closed readers move values they do not know to unknown fields, open ones keep them",
			n.FullName(), openness(o), openness(n))
	}
	c.jsonFormat(EnumJSONFormatChanged, "enum", o, n)
	c.reservedValues(o, n)
	ovs, nvs := o.Values(), n.Values()
	for i := 0; i < ovs.Len(); i++ {
		ov := ovs.Get(i)
		elem := string(o.FullName()) + "." + string(ov.Name())
		nv := nvs.ByNumber(ov.Number())
		if nv != nil {
			if same := nvs.ByName(ov.Name()); same != nil && same.Number() == ov.Number() {
				continue // unchanged, or still present as an alias
			}
			if aliasKept(ovs, nvs, ov) {
				if !n.ReservedNames().Has(ov.Name()) {
					c.report(EnumValueDeletedNameUnreserved, elem, c.pos(n),
						"alias %s of enum value %d was deleted without reserving its name; add `reserved \"%s\";`", elem, ov.Number(), ov.Name())
				}
				continue
			}
			if nv.Name() != ov.Name() {
				c.report(EnumValueRenamed, elem, c.pos(nv),
					"enum value %d of %s was renamed from %s to %s; JSON carries enum values by name", ov.Number(), n.FullName(), ov.Name(), nv.Name())
			}
			continue
		}
		if moved := nvs.ByName(ov.Name()); moved != nil {
			c.report(EnumValueNumberChanged, elem, c.pos(moved),
				"enum value %s changed its number from %d to %d", elem, ov.Number(), moved.Number())
			continue
		}
		at := c.pos(n)
		if !n.ReservedRanges().Has(ov.Number()) {
			c.report(EnumValueDeletedNumberUnreserved, elem, at,
				"enum value %s (%d) was deleted without reserving its number; add `reserved %d;`", elem, ov.Number(), ov.Number())
		}
		if !n.ReservedNames().Has(ov.Name()) {
			c.report(EnumValueDeletedNameUnreserved, elem, at,
				"enum value %s was deleted without reserving its name; add `reserved \"%s\";`", elem, ov.Name())
		}
	}
}

// aliasKept reports whether another old name for ov's number survives in
// the new enum: ov was an alias, and deleting it deletes a name only.
func aliasKept(ovs, nvs protoreflect.EnumValueDescriptors, ov protoreflect.EnumValueDescriptor) bool {
	for i := 0; i < ovs.Len(); i++ {
		w := ovs.Get(i)
		if w.Number() == ov.Number() && w.Name() != ov.Name() {
			if nw := nvs.ByName(w.Name()); nw != nil && nw.Number() == w.Number() {
				return true
			}
		}
	}
	return false
}
