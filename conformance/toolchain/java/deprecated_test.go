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
// warning fails it.
func TestDeprecatedCompilesCleanly(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves the Java toolchain with Maven; skipped with -short")
	}
	ctx := context.Background()
	tools, err := java.Resolve(ctx)
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
