package plugin

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
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
	// Source info keeps the locations of declarations only, of the files
	// to generate only.
	want := proto.Clone(contractsOnly(decoded)).(*pluginpb.CodeGeneratorRequest)
	if len(want.SourceFileDescriptors) != 1 {
		t.Fatalf("contractsOnly kept %d source file descriptors, want ev.proto's", len(want.SourceFileDescriptors))
	}
	want.SourceFileDescriptors = nil
	var all, kept int
	for _, f := range want.ProtoFile {
		if f.GetName() != "ev.proto" {
			if f.GetName() == "reexport.proto" && f.SourceCodeInfo == nil {
				t.Fatalf("%s has no source info to drop", f.GetName())
			}
			f.SourceCodeInfo = nil
			continue
		}
		var locs []*descriptorpb.SourceCodeInfo_Location
		for _, l := range f.GetSourceCodeInfo().GetLocation() {
			if declarationPath(l.Path) {
				locs = append(locs, l)
			}
		}
		all += len(f.GetSourceCodeInfo().GetLocation())
		kept += len(locs)
		if f.SourceCodeInfo != nil {
			f.SourceCodeInfo.Location = locs
		}
	}
	if kept == 0 || kept == all {
		t.Fatalf("%d of %d locations are declarations", kept, all)
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
	var enums func(es protoreflect.EnumDescriptors)
	enums = func(es protoreflect.EnumDescriptors) {
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
