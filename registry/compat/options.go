package compat

import (
	"bytes"

	"github.com/msgcontract/msgcontract/third_party/protocompile/protoutil"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// The rules on options and editions features of fields, messages and
// enums present in both versions. Features are resolved as the compiler
// does (field, then its message, then the file; proto2 and proto3 files
// have their editions' defaults), so `syntax = "proto2"` to `"proto3"`
// reports what the switch changes: UTF-8 validation, open enums, presence.

var featureFields = (&descriptorpb.FeatureSet{}).ProtoReflect().Descriptor().Fields()

// feature resolves the FeatureSet field name for d, or 0 when it cannot.
func feature(d protoreflect.Descriptor, name protoreflect.Name) protoreflect.EnumNumber {
	v, err := protoutil.ResolveFeature(d, featureFields.ByName(name))
	if err != nil || !v.IsValid() {
		return 0
	}
	return v.Enum()
}

func (c *checker) fieldOptions(of, nf protoreflect.FieldDescriptor) {
	elem := string(nf.FullName())
	if of.JSONName() != nf.JSONName() {
		c.report(FieldJSONNameChanged, elem, c.pos(nf), "field %s changed its JSON name from %q to %q; JSON written with JSON names no longer matches",
			elem, of.JSONName(), nf.JSONName())
	}
	oo, no := realOneof(of), realOneof(nf)
	switch {
	case oo == nil && no != nil:
		c.report(FieldOneofChanged, elem, c.pos(nf), "field %s moved into oneof %s; generated accessors change", elem, no.Name())
	case oo != nil && no == nil:
		c.report(FieldOneofChanged, elem, c.pos(nf), "field %s moved out of oneof %s; generated accessors change", elem, oo.Name())
	case oo != nil && oo.Name() != no.Name():
		c.report(FieldOneofChanged, elem, c.pos(nf), "field %s moved from oneof %s to %s; generated accessors change", elem, oo.Name(), no.Name())
	}
	singular := !of.IsList() && !nf.IsList() && !of.IsMap() && !nf.IsMap()
	if singular && of.Cardinality() != protoreflect.Required && nf.Cardinality() != protoreflect.Required &&
		(of.Message() == nil) == (nf.Message() == nil) && of.HasPresence() != nf.HasPresence() {
		c.report(FieldPresenceChanged, elem, c.pos(nf), "field %s %s; has-checks and generated accessors change",
			elem, map[bool]string{true: "gained explicit presence", false: "lost explicit presence"}[nf.HasPresence()])
	}
	if singular && of.Kind() == nf.Kind() && of.Kind() != protoreflect.MessageKind && of.Kind() != protoreflect.GroupKind &&
		!sameValue(of.Default(), nf.Default()) {
		c.report(FieldDefaultChanged, elem, c.pos(nf), "field %s changed its default from %s to %s; readers of data without the field see another value",
			elem, defaultText(of), defaultText(nf))
	}
	if isString(of) && isString(nf) {
		ov, nv := feature(of, "utf8_validation"), feature(nf, "utf8_validation")
		if ov != nv {
			c.report(FieldUTF8ValidationChanged, elem, c.pos(nf), "field %s changed its UTF-8 validation from %s to %s; the validating side rejects invalid UTF-8 the other writes",
				elem, descriptorpb.FeatureSet_Utf8Validation(ov), descriptorpb.FeatureSet_Utf8Validation(nv))
		}
		if oj, nj := javaUTF8(of), javaUTF8(nf); oj != nj {
			c.report(FieldJavaUTF8Changed, elem, c.pos(nf), "field %s: Java's UTF-8 check %s; Java readers and the other side disagree on invalid UTF-8",
				elem, map[bool]string{true: "was turned on", false: "was turned off"}[nj])
		}
		if oc, nc := cppStringType(of), cppStringType(nf); oc != nc {
			c.report(FieldCTypeChanged, elem, c.pos(nf), "field %s changed its C++ string type from %s to %s", elem, oc, nc)
		}
	}
	if ojs, njs := fieldOpts(of).GetJstype(), fieldOpts(nf).GetJstype(); ojs != njs {
		c.report(FieldJSTypeChanged, elem, c.pos(nf), "field %s changed its jstype from %s to %s", elem, ojs, njs)
	}
}

func fieldOpts(f protoreflect.FieldDescriptor) *descriptorpb.FieldOptions {
	o, _ := f.Options().(*descriptorpb.FieldOptions)
	return o
}

func isString(f protoreflect.FieldDescriptor) bool {
	if f.IsMap() {
		return f.MapKey().Kind() == protoreflect.StringKind || f.MapValue().Kind() == protoreflect.StringKind
	}
	return f.Kind() == protoreflect.StringKind
}

// javaUTF8 is whether Java's generated parser checks f's UTF-8: the file
// option java_string_check_utf8, or the (pb.java).utf8_validation feature
// set to VERIFY.
func javaUTF8(f protoreflect.FieldDescriptor) bool {
	if fo, ok := f.ParentFile().Options().(*descriptorpb.FileOptions); ok && fo.GetJavaStringCheckUtf8() {
		return true
	}
	v, ok := customFeature(f, "pb.java", "utf8_validation")
	return ok && v == 2 // pb.JavaFeatures.Utf8Validation.VERIFY
}

// cppStringType is the ctype option or the (pb.cpp).string_type feature.
func cppStringType(f protoreflect.FieldDescriptor) string {
	if v, ok := customFeature(f, "pb.cpp", "string_type"); ok {
		switch v {
		case 2:
			return "VIEW"
		case 3:
			return "CORD"
		case 1:
			return "STRING"
		}
	}
	return fieldOpts(f).GetCtype().String()
}

// customFeature reads a language feature (an extension of FeatureSet
// such as pb.java) set on d or the nearest enclosing element; ok is false
// when none sets it.
func customFeature(d protoreflect.Descriptor, ext protoreflect.FullName, name protoreflect.Name) (protoreflect.EnumNumber, bool) {
	for ; d != nil; d = d.Parent() {
		fs := featuresOf(d)
		if fs == nil {
			continue
		}
		var val protoreflect.EnumNumber
		found := false
		fs.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if !fd.IsExtension() || fd.FullName() != ext || fd.Kind() != protoreflect.MessageKind {
				return true
			}
			inner := v.Message()
			if f := inner.Descriptor().Fields().ByName(name); f != nil && inner.Has(f) {
				val, found = inner.Get(f).Enum(), true
			}
			return false
		})
		if found {
			return val, true
		}
	}
	return 0, false
}

func featuresOf(d protoreflect.Descriptor) *descriptorpb.FeatureSet {
	switch o := d.Options().(type) {
	case *descriptorpb.FieldOptions:
		return o.GetFeatures()
	case *descriptorpb.MessageOptions:
		return o.GetFeatures()
	case *descriptorpb.OneofOptions:
		return o.GetFeatures()
	case *descriptorpb.FileOptions:
		return o.GetFeatures()
	case *descriptorpb.EnumOptions:
		return o.GetFeatures()
	}
	return nil
}

func sameValue(a, b protoreflect.Value) bool {
	ai, bi := a.Interface(), b.Interface()
	if ab, ok := ai.([]byte); ok {
		bb, ok := bi.([]byte)
		return ok && bytes.Equal(ab, bb)
	}
	return ai == bi
}

func defaultText(f protoreflect.FieldDescriptor) string {
	if f.Kind() == protoreflect.EnumKind {
		if ev := f.DefaultEnumValue(); ev != nil {
			return string(ev.Name())
		}
	}
	if f.Kind() == protoreflect.StringKind || f.Kind() == protoreflect.BytesKind {
		return "\"" + f.Default().String() + "\""
	}
	return f.Default().String()
}

// jsonFormat compares the json_format feature of a message or enum
// between editions files. proto2's and proto3's defaults differ
// (LEGACY_BEST_EFFORT, ALLOW), but a syntax switch changes no reader's
// JSON: like buf, only an editions feature set on purpose is compared.
func (c *checker) jsonFormat(id, what string, o, n protoreflect.Descriptor) {
	if o.ParentFile().Syntax() != protoreflect.Editions || n.ParentFile().Syntax() != protoreflect.Editions {
		return
	}
	if of, nf := feature(o, "json_format"), feature(n, "json_format"); of != nf {
		c.report(id, string(n.FullName()), c.pos(n), "%s %s changed its json_format from %s to %s; one side no longer guarantees a JSON mapping",
			what, n.FullName(), descriptorpb.FeatureSet_JsonFormat(of), descriptorpb.FeatureSet_JsonFormat(nf))
	}
}

func openness(e protoreflect.EnumDescriptor) string {
	if e.IsClosed() {
		return "closed"
	}
	return "open"
}
