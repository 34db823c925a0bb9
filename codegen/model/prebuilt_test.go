package model_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/contracts"
	"github.com/msgcontract/msgcontract/runtime-go/optionspb"
)

// TestPrebuiltIsTheEmbeddedSource: Config.Prebuilt stands the compiled-in
// descriptor of options.proto for the embedded source, so the two must be
// the same file. This fails when options.proto changes and `make proto`
// was not run.
func TestPrebuiltIsTheEmbeddedSource(t *testing.T) {
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"t.proto": `syntax = "proto3";
package t.v1;
import "msgcontract/v1/options.proto";
message M { string id = 1; }
`}}, "t.proto")
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := set.Registry.FindFileByPath(contracts.OptionsPath)
	if err != nil {
		t.Fatal(err)
	}
	if compiled == optionspb.File_msgcontract_v1_options_proto {
		t.Fatal("without Prebuilt, options.proto was not compiled from its source")
	}
	got := protodesc.ToFileDescriptorProto(compiled)
	got.SourceCodeInfo = nil
	want := protodesc.ToFileDescriptorProto(optionspb.File_msgcontract_v1_options_proto)
	if !proto.Equal(got, want) {
		t.Fatalf("runtime-go/optionspb is not contracts/msgcontract/v1/options.proto compiled; run make proto\ncompiled: %v\noptionspb: %v", got, want)
	}
}

// TestPrebuilt: with Prebuilt, options.proto resolves to the compiled-in
// descriptor, embedded or as an identical copy on an import path, and a
// copy that differs is compiled from its own text.
func TestPrebuilt(t *testing.T) {
	own, err := contracts.Source(contracts.OptionsPath)
	if err != nil {
		t.Fatal(err)
	}
	user := []byte(`syntax = "proto3";
package t.v1;
import "msgcontract/v1/options.proto";
message M {
  option (msgcontract.v1.event) = { topic: "t" event_type: "M" biz_key: "{id}" };
  string id = 1;
}
`)
	changed := append(append([]byte(nil), own...), []byte("\n// a local edit\nmessage LocalExtra {}\n")...)
	for _, tc := range []struct {
		name     string
		copy     []byte // options.proto on the import path; nil: none
		prebuilt bool
	}{
		{"embedded", nil, true},
		{"identical copy", own, true},
		{"changed copy", changed, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, "t.proto"), user)
			if tc.copy != nil {
				write(t, filepath.Join(dir, filepath.FromSlash(contracts.OptionsPath)), tc.copy)
			}
			set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{dir}, Prebuilt: true}, filepath.Join(dir, "t.proto"))
			if err != nil {
				t.Fatal(err)
			}
			fd, err := set.Registry.FindFileByPath(contracts.OptionsPath)
			if err != nil {
				t.Fatal(err)
			}
			if got := unwrap(fd) == optionspb.File_msgcontract_v1_options_proto; got != tc.prebuilt {
				t.Errorf("options.proto is the compiled-in descriptor: %v, want %v", got, tc.prebuilt)
			}
			if tc.copy != nil && (fd.Messages().ByName("LocalExtra") != nil) == tc.prebuilt {
				t.Errorf("LocalExtra declared: %v, want %v", fd.Messages().ByName("LocalExtra") != nil, !tc.prebuilt)
			}
			if len(set.Diagnostics) > 0 || len(set.Files) != 1 || len(set.Files[0].Events) != 1 || set.Files[0].Events[0].BizKeyTemplate != "{id}" {
				t.Errorf("the contract did not load with its options: %v %+v", set.Diagnostics, set.Files)
			}
		})
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// unwrap returns the descriptor protocompile wrapped for an import.
func unwrap(fd protoreflect.FileDescriptor) protoreflect.FileDescriptor {
	if u, ok := fd.(interface {
		Unwrap() protoreflect.FileDescriptor
	}); ok {
		return u.Unwrap()
	}
	return fd
}
