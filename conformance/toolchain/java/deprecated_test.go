package java_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/conformance/toolchain/java"
)

// TestDeprecatedCompilesCleanly compiles the contracts of
// testdata/deprecated, whose biz_keys, events and state machines name
// every kind of element protoc marks @Deprecated (fields, a group, enum
// fields open and closed, oneof members, messages, enclosing messages,
// enums, enum values, a whole file), with javac -Xlint:all -Werror, as
// every build of generated Java is compiled (Compile): a deprecation
// warning fails it. Both ends of PROTOBUF's Java range: what protoc marks
// and which protobuf-java methods are deprecated change between releases.
func TestDeprecatedCompilesCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves the Java toolchain with Maven; skipped with -short")
	}
	for _, end := range []java.End{java.Newest, java.Oldest} {
		t.Run(end.String(), func(t *testing.T) { deprecatedCompilesCleanly(t, end) })
	}
}

func deprecatedCompilesCleanly(t *testing.T, end java.End) {
	ctx := context.Background()
	tools, err := java.ResolveEnd(ctx, end)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tools.Close() })
	root := "testdata"
	var files []string
	for _, f := range []string{"fields.proto", "legacy.proto", "whole.proto", "wholemulti.proto"} {
		files = append(files, filepath.Join(root, "deprecated", "v1", f))
	}
	set, err := model.Load(ctx, model.Config{ImportPaths: []string{root}}, files...)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Diagnostics) > 0 {
		t.Fatalf("lint:\n%v", set.Diagnostics)
	}
	if _, err := tools.Compile(ctx, set, []string{root}, t.TempDir(), nil); err != nil {
		t.Fatal(err)
	}
}
