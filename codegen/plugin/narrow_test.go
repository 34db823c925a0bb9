package plugin

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/msgcontract/msgcontract/codegen/golang/pbgo"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// TestNarrowRawIsContractsOnly: narrowing the encoded request keeps
// exactly what narrowing the decoded one keeps (the contract files to
// generate and their imports, public ones included), and Run answers as
// Generate does.
func TestNarrowRawIsContractsOnly(t *testing.T) {
	t.Parallel()
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{
		"plain.proto":    "syntax = \"proto3\";\npackage p;\noption go_package = \"example.com/p\";\nmessage Plain { string id = 1; }\n",
		"reexport.proto": "syntax = \"proto3\";\npackage r;\nimport public \"msgcontract/v1/options.proto\";\noption go_package = \"example.com/r\";\n",
		"ev.proto": `syntax = "proto3";
package t;
import "reexport.proto";
import "plain.proto";
option go_package = "example.com/t";
// Paid is paid.
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
  p.Plain plain = 2;
}`,
		"other.proto": "syntax = \"proto3\";\npackage o;\noption go_package = \"example.com/o\";\nmessage Other { string id = 1; }\n",
	}}, "plain.proto", "ev.proto", "other.proto")
	if err != nil {
		t.Fatal(err)
	}
	req := pbgo.Request("", set.Descriptors()...)
	// protoc 24 and later send the files to generate again, with
	// source-retention options: narrowRaw drops them.
	for _, f := range req.ProtoFile {
		if f.GetName() == "ev.proto" || f.GetName() == "other.proto" {
			req.SourceFileDescriptors = append(req.SourceFileDescriptors, proto.Clone(f).(*descriptorpb.FileDescriptorProto))
		}
	}
	raw, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	got := &pluginpb.CodeGeneratorRequest{}
	if err := proto.Unmarshal(narrowRaw(raw), got); err != nil {
		t.Fatal(err)
	}
	decoded := &pluginpb.CodeGeneratorRequest{} // options as a plugin decodes them
	if err := proto.Unmarshal(raw, decoded); err != nil {
		t.Fatal(err)
	}
	// Source info keeps the locations of declarations and of their custom
	// option statements only, of the files to generate only.
	want := proto.Clone(contractsOnly(decoded)).(*pluginpb.CodeGeneratorRequest)
	if len(want.SourceFileDescriptors) != 1 {
		t.Fatalf("contractsOnly kept %d source file descriptors, want ev.proto's", len(want.SourceFileDescriptors))
	}
	want.SourceFileDescriptors = nil
	var all, kept, options int
	for i, f := range want.ProtoFile {
		if f.GetName() == descriptorProto {
			want.ProtoFile[i] = trimmedDescriptorProto(f, "FileOptions", "MessageOptions", "EnumOptions", "EnumValueOptions")
			continue
		}
		if f.GetName() != "ev.proto" {
			if f.GetName() == "reexport.proto" && f.SourceCodeInfo == nil {
				t.Fatalf("%s has no source info to drop", f.GetName())
			}
			f.SourceCodeInfo = nil
			continue
		}
		var locs []*descriptorpb.SourceCodeInfo_Location
		for _, l := range f.GetSourceCodeInfo().GetLocation() {
			if customOptionPath(l.Path) {
				options++
			}
			if declarationPath(l.Path) || customOptionPath(l.Path) {
				locs = append(locs, l)
			}
		}
		all += len(f.GetSourceCodeInfo().GetLocation())
		kept += len(locs)
		if f.SourceCodeInfo != nil {
			f.SourceCodeInfo.Location = locs
		}
	}
	if kept == 0 || kept == all || options == 0 {
		t.Fatalf("%d of %d locations are declarations or custom option statements (%d of those), want some of each kind and fewer than all", kept, all, options)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("narrowRaw kept %v of %d files, contractsOnly %v of %d", got.FileToGenerate, len(got.ProtoFile),
			want.FileToGenerate, len(want.ProtoFile))
	}
	if len(got.FileToGenerate) != 1 || got.FileToGenerate[0] != "ev.proto" || len(got.ProtoFile) >= len(req.ProtoFile) {
		t.Fatalf("kept %v to generate and %d of %d files, want ev.proto and fewer files", got.FileToGenerate, len(got.ProtoFile), len(req.ProtoFile))
	}
	var out bytes.Buffer
	if err := Run(bytes.NewReader(raw), &out, "v1"); err != nil {
		t.Fatal(err)
	}
	viaRun := &pluginpb.CodeGeneratorResponse{}
	if err := proto.Unmarshal(out.Bytes(), viaRun); err != nil {
		t.Fatal(err)
	}
	if direct := Generate(decoded, "v1"); !proto.Equal(viaRun, direct) || len(direct.File) != 1 {
		t.Fatalf("Run answered %d files (error %q), Generate %d (error %q), want the same one", len(viaRun.File),
			viaRun.GetError(), len(direct.File), direct.GetError())
	}
}

// trimmedDescriptorProto is what extendeesOnly should keep of
// descriptor.proto f when options.proto extends the messages named.
func trimmedDescriptorProto(f *descriptorpb.FileDescriptorProto, extendees ...string) *descriptorpb.FileDescriptorProto {
	out := &descriptorpb.FileDescriptorProto{Name: f.Name, Package: f.Package, Options: f.Options, Syntax: f.Syntax, Edition: f.Edition}
	for _, m := range f.MessageType {
		if !slices.Contains(extendees, m.GetName()) {
			continue
		}
		kept := &descriptorpb.DescriptorProto{Name: m.Name}
		for _, r := range m.ExtensionRange {
			kept.ExtensionRange = append(kept.ExtensionRange, &descriptorpb.DescriptorProto_ExtensionRange{Start: r.Start, End: r.End})
		}
		out.MessageType = append(out.MessageType, kept)
	}
	return out
}

// TestDescriptorProtoIsTrimmedForOptionsOnly: descriptor.proto, when only
// options.proto imports it, reaches the plugin's view as the messages
// options.proto extends and nothing else, and what the plugin writes is
// what it writes from the whole file. When a kept file imports it too
// (a team's own options), or options.proto refers to it otherwise, it is
// kept whole.
func TestDescriptorProtoIsTrimmedForOptionsOnly(t *testing.T) {
	t.Parallel()
	const contract = `syntax = "proto3";
package t;
import "msgcontract/v1/options.proto";
%s
option go_package = "example.com/t";
// Paid is paid.
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1%s;
}
%s`
	cases := []struct {
		name        string
		src         string
		wantTrimmed bool
	}{
		{"options.proto alone imports it", fmt.Sprintf(contract, "", "", ""), true},
		{"a contract imports it too", fmt.Sprintf(contract, `import "google/protobuf/descriptor.proto";`, " [(audit) = true]",
			"extend google.protobuf.FieldOptions { bool audit = 50001; }\n"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"t.proto": c.src}}, "t.proto")
			if err != nil {
				t.Fatal(err)
			}
			for _, lang := range []string{"go", "go+java+python"} {
				req := pbgo.Request("lang="+lang, set.Descriptors()...)
				raw, err := proto.Marshal(req)
				if err != nil {
					t.Fatal(err)
				}
				narrowed := &pluginpb.CodeGeneratorRequest{}
				if err := proto.Unmarshal(narrowRaw(raw), narrowed); err != nil {
					t.Fatal(err)
				}
				var got, whole *descriptorpb.FileDescriptorProto
				for _, f := range narrowed.ProtoFile {
					if f.GetName() == descriptorProto {
						got = f
					}
				}
				for _, f := range req.ProtoFile {
					if f.GetName() == descriptorProto {
						whole = f
					}
				}
				if got == nil || whole == nil {
					t.Fatalf("descriptor.proto: narrowed %v, request %v", got != nil, whole != nil)
				}
				want := whole
				if c.wantTrimmed {
					want = trimmedDescriptorProto(whole, "FileOptions", "MessageOptions", "EnumOptions", "EnumValueOptions")
					if len(want.MessageType) != 4 || len(want.MessageType[0].ExtensionRange) == 0 {
						t.Fatalf("trimmed descriptor.proto has %d messages, want the 4 options.proto extends", len(want.MessageType))
					}
				}
				whole.SourceCodeInfo = nil // never kept for a file only imported
				if !proto.Equal(got, want) {
					t.Fatalf("lang=%s: narrowRaw kept %d messages of descriptor.proto, want %d", lang, len(got.MessageType), len(want.MessageType))
				}
				var out bytes.Buffer
				if err := Run(bytes.NewReader(raw), &out, "v1"); err != nil {
					t.Fatal(err)
				}
				direct, err := proto.Marshal(Generate(req, "v1"))
				if err != nil {
					t.Fatal(err)
				}
				if resp := Generate(req, "v1"); resp.Error != nil || len(resp.File) == 0 || !bytes.Equal(out.Bytes(), direct) {
					t.Fatalf("lang=%s: Run answered %d bytes, Generate %d files (error %q) in %d bytes; want the same files",
						lang, out.Len(), len(resp.File), resp.GetError(), len(direct))
				}
			}
		})
	}
}

// TestOptionsExtendees: the messages options.proto extends are read from
// its extensions; any other reference to descriptor.proto keeps it whole.
func TestOptionsExtendees(t *testing.T) {
	t.Parallel()
	ext := func(extendee, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String("x"), Number: proto.Int32(50000), Extendee: proto.String(extendee)}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	cases := []struct {
		name string
		file *descriptorpb.FileDescriptorProto
		want []string
	}{
		{"top-level extends", &descriptorpb.FileDescriptorProto{Extension: []*descriptorpb.FieldDescriptorProto{
			ext(".google.protobuf.FileOptions", ""), ext(".google.protobuf.FieldOptions", ".other.Msg"), ext(".other.Base", ""),
		}}, []string{"FieldOptions", "FileOptions"}},
		{"an extension of a descriptor.proto type", &descriptorpb.FileDescriptorProto{Extension: []*descriptorpb.FieldDescriptorProto{
			ext(".google.protobuf.FileOptions", ".google.protobuf.FieldOptions"),
		}}, nil},
		{"a nested extendee", &descriptorpb.FileDescriptorProto{Extension: []*descriptorpb.FieldDescriptorProto{
			ext(".google.protobuf.DescriptorProto.ExtensionRange", ""),
		}}, nil},
		{"an extend inside a message", &descriptorpb.FileDescriptorProto{
			Extension: []*descriptorpb.FieldDescriptorProto{ext(".google.protobuf.FileOptions", "")},
			MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("M"), NestedType: []*descriptorpb.DescriptorProto{{
				Name: proto.String("N"), Extension: []*descriptorpb.FieldDescriptorProto{ext(".google.protobuf.MessageOptions", "")},
			}}}},
		}, nil},
		{"a message field of a descriptor.proto type", &descriptorpb.FileDescriptorProto{
			Extension: []*descriptorpb.FieldDescriptorProto{ext(".google.protobuf.FileOptions", "")},
			MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("M"), Field: []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("f"), Number: proto.Int32(1), TypeName: proto.String(".google.protobuf.FileDescriptorProto"),
			}}}},
		}, nil},
		{"no extensions", &descriptorpb.FileDescriptorProto{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := proto.Marshal(c.file)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(maps.Keys(optionsExtendees(b)))
			if !slices.Equal(got, c.want) {
				t.Fatalf("optionsExtendees = %v, want %v", got, c.want)
			}
		})
	}
}

// TestDeclarationPath: a source location is kept exactly when its path
// is that of a descriptor (what ByDescriptor looks up), over every
// location of the examples and the codegen edge cases.
func TestDeclarationPath(t *testing.T) {
	t.Parallel()
	sets := map[string][]string{
		"examples/proto":         {"shop/payment/v1/payment.proto", "shop/inventory/v1/inventory.proto"},
		"testdata/codegen/proto": {"edge/keys/v1/keys.proto", "edge/keys/v1/states.proto", "edge/legacy/v1/legacy.proto", "edge/empty/v1/empty.proto"},
	}
	checked := 0
	for root, files := range sets {
		dir := filepath.Join("..", "..", filepath.FromSlash(root))
		var paths []string
		for _, f := range files {
			paths = append(paths, filepath.Join(dir, filepath.FromSlash(f)))
		}
		set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{dir, filepath.Join("..", "..", "contracts")}}, paths...)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range pbgoWithImports(set) {
			locs := fd.SourceLocations()
			decls := map[string]bool{}
			for _, d := range descriptorsOf(fd) {
				decls[fmt.Sprint(locs.ByDescriptor(d).Path)] = true
			}
			for i := 0; i < locs.Len(); i++ {
				path := locs.Get(i).Path
				if got, want := declarationPath(path), decls[fmt.Sprint(path)]; got != want {
					t.Errorf("%s: declarationPath(%v) = %v, want %v", fd.Path(), path, got, want)
				}
				checked++
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d locations checked", checked)
	}
}

func pbgoWithImports(set *model.Set) []protoreflect.FileDescriptor {
	return pbgo.WithImports(set.Descriptors()...)
}

// descriptorsOf is fd and every descriptor declared in it.
func descriptorsOf(fd protoreflect.FileDescriptor) []protoreflect.Descriptor {
	out := []protoreflect.Descriptor{fd}
	enums := func(es protoreflect.EnumDescriptors) {
		for i := 0; i < es.Len(); i++ {
			out = append(out, es.Get(i))
			for j := 0; j < es.Get(i).Values().Len(); j++ {
				out = append(out, es.Get(i).Values().Get(j))
			}
		}
	}
	exts := func(xs protoreflect.ExtensionDescriptors) {
		for i := 0; i < xs.Len(); i++ {
			out = append(out, xs.Get(i))
		}
	}
	var messages func(ms protoreflect.MessageDescriptors)
	messages = func(ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len(); i++ {
			m := ms.Get(i)
			out = append(out, m)
			for j := 0; j < m.Fields().Len(); j++ {
				out = append(out, m.Fields().Get(j))
			}
			for j := 0; j < m.Oneofs().Len(); j++ {
				out = append(out, m.Oneofs().Get(j))
			}
			enums(m.Enums())
			exts(m.Extensions())
			messages(m.Messages())
		}
	}
	messages(fd.Messages())
	enums(fd.Enums())
	exts(fd.Extensions())
	for i := 0; i < fd.Services().Len(); i++ {
		s := fd.Services().Get(i)
		out = append(out, s)
		for j := 0; j < s.Methods().Len(); j++ {
			out = append(out, s.Methods().Get(j))
		}
	}
	return out
}

// TestDeclarationsOnlyLeavesMalformedFiles: a file whose source info
// cannot be read is passed on as it is, for proto.Unmarshal to judge.
func TestDeclarationsOnlyLeavesMalformedFiles(t *testing.T) {
	t.Parallel()
	name := protowire.AppendString(protowire.AppendTag(nil, fileName, protowire.BytesType), "x.proto")
	for label, info := range map[string][]byte{
		"truncated location": {0x0a, 0x05, 0x0a, 0x02, 0x04},
		"bad packed path":    {0x0a, 0x03, 0x0a, 0x01, 0x80},
	} {
		file := protowire.AppendBytes(protowire.AppendTag(append([]byte(nil), name...), fileSourceCodeInfo, protowire.BytesType), info)
		dst, _, ok := declarationsOnly([]byte("prefix"), file, nil, true)
		if ok || string(dst) != "prefix" {
			t.Errorf("%s: ok = %v, dst %q; want false and dst unchanged", label, ok, dst)
		}
	}
	file := append(append([]byte(nil), name...), protowire.AppendBytes(protowire.AppendTag(nil, fileSourceCodeInfo, protowire.BytesType), nil)...)
	if _, _, ok := declarationsOnly(nil, append(file, file...), nil, true); ok {
		t.Error("two source_code_info fields narrowed; want them passed on to merge")
	}
}

// TestCustomOptionPath: the option statements lint points at are kept,
// standard options and the insides of a declaration are not.
func TestCustomOptionPath(t *testing.T) {
	for _, tc := range []struct {
		path []int32
		want bool
	}{
		{[]int32{8, 58100}, true},             // option (msgcontract.v1.defaults) = {...};
		{[]int32{4, 0, 7, 58101}, true},       // a message's option (msgcontract.v1.event)
		{[]int32{4, 2, 3, 1, 7, 58101}, true}, // a nested message's
		{[]int32{5, 0, 2, 3, 3, 58103}, true}, // an enum value's [(msgcontract.v1.transition) = {...}]
		{[]int32{5, 1, 3, 58102}, true},       // an enum's option (msgcontract.v1.state_machine)
		{[]int32{8, 11}, false},               // option go_package
		{[]int32{4, 0, 7, 7}, false},          // option deprecated on a message
		{[]int32{4, 0, 7}, false},             // a message's options as a whole
		{[]int32{4, 0, 1}, false},             // a message's name
		{[]int32{4, 0, 7, 58101, 1}, false},   // inside an option's value
		{[]int32{58100}, false},
		{nil, false},
	} {
		if got := customOptionPath(tc.path); got != tc.want {
			t.Errorf("customOptionPath(%v) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// An edition-2024 contract that brings the options in with `import option`
// is generated, with its option imports among the files kept; a file whose
// option imports do not reach the options is not. fileHeader reads the
// option imports from the encoded file.
func TestContractFilesFollowOptionImports(t *testing.T) {
	t.Parallel()
	const javaFeatures = "google/protobuf/java_features.proto"
	files := []*descriptorpb.FileDescriptorProto{
		{Name: proto.String(descriptorProto)},
		{Name: proto.String(optionsProto), Dependency: []string{descriptorProto}},
		{Name: proto.String(javaFeatures), Dependency: []string{descriptorProto}},
		{Name: proto.String("ev.proto"), OptionDependency: []string{optionsProto, javaFeatures}},
		{Name: proto.String("plain.proto"), OptionDependency: []string{javaFeatures}},
	}
	var headers []*descriptorpb.FileDescriptorProto
	for _, f := range files {
		raw, err := proto.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		h := fileHeader(raw)
		if h == nil || !slices.Equal(h.GetOptionDependency(), f.GetOptionDependency()) {
			t.Fatalf("fileHeader(%s) = %v, want option imports %q", f.GetName(), h, f.GetOptionDependency())
		}
		headers = append(headers, h)
	}
	generate, needed := contractFiles([]string{"ev.proto", "plain.proto"}, headers)
	if !slices.Equal(generate, []string{"ev.proto"}) {
		t.Errorf("generate = %q, want [ev.proto]", generate)
	}
	want := []string{"ev.proto", descriptorProto, javaFeatures, optionsProto}
	if got := slices.Sorted(maps.Keys(needed)); !slices.Equal(got, want) {
		t.Errorf("needed = %q, want %q", got, want)
	}
}
