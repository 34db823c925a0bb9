package protocin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/conformance/toolchain/protocin"
)

func load(t *testing.T, src string) *model.Set {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.proto")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{dir}}, p)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// The feature files a set imports travel to protoc as a descriptor set,
// nothing else does, and a set without them needs no argument.
func TestArgs(t *testing.T) {
	set := load(t, `edition = "2023";
package a.v1;
import "google/protobuf/go_features.proto";
import "google/protobuf/java_features.proto";
option features.(pb.go).legacy_unmarshal_json_enum = false;
message M { string s = 1 [features.(pb.java).utf8_validation = VERIFY]; }
`)
	dir := t.TempDir()
	args, err := protocin.Args(set, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 1 || !strings.HasPrefix(args[0], "--descriptor_set_in=") {
		t.Fatalf("args = %q", args)
	}
	raw, err := os.ReadFile(strings.TrimPrefix(args[0], "--descriptor_set_in="))
	if err != nil {
		t.Fatal(err)
	}
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &fds); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fds.GetFile() {
		names = append(names, f.GetName())
	}
	if got, want := strings.Join(names, " "), "google/protobuf/go_features.proto google/protobuf/java_features.proto"; got != want {
		t.Errorf("descriptor set holds %q, want %q", got, want)
	}

	plain := load(t, "syntax = \"proto3\";\npackage a.v1;\nmessage M { string s = 1; }\n")
	if args, err := protocin.Args(plain, t.TempDir()); err != nil || args != nil {
		t.Errorf("a set without feature files: args %q, err %v; want none", args, err)
	}
}
