package java_test

import (
	"context"
	"flag"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/emit/emittest"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden/java")

// exampleFiles are the example contracts whose generated Java is kept as
// golden files.
var exampleFiles = []string{"../../examples/proto/shop/payment/v1/payment.proto", "../../examples/proto/shop/inventory/v1/inventory.proto"}

func generateExamples(t *testing.T) []emit.File {
	t.Helper()
	set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{"../../examples/proto"}}, exampleFiles...)
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate.Run(set, emit.Params{Lang: "java", Version: "v0.0.0-golden"})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestGolden fails when testdata/golden/java is stale; refresh it with
// go test ./codegen/java -update.
func TestGolden(t *testing.T) {
	files := generateExamples(t)
	root := filepath.Join("..", "..", "testdata", "golden", "java")
	emittest.Golden(t, root, files, *update, "go test ./codegen/java -update")
}

// TestDeprecationMarks: for the contracts of
// conformance/toolchain/java/testdata/deprecated (which that package compiles
// with javac -Xlint:all -Werror), a contract class is @Deprecated exactly
// where the proto element it stands for is (a file, a message or an enum,
// or a message enclosing it), and @SuppressWarnings("deprecation") sits on
// the one member that must call a deprecated accessor (bizKey, for a
// template naming deprecated fields) and only outside deprecated classes,
// never on a class.
func TestDeprecationMarks(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "conformance", "toolchain", "java", "testdata")
	var paths []string
	for _, f := range []string{"fields.proto", "legacy.proto", "whole.proto", "wholemulti.proto"} {
		paths = append(paths, filepath.Join(root, "deprecated", "v1", f))
	}
	set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{root}}, paths...)
	if err != nil {
		t.Fatal(err)
	}
	files, err := generate.Run(set, emit.Params{Lang: "java"})
	if err != nil {
		t.Fatal(err)
	}
	// Each annotation and the declaration it annotates, class by class.
	decl := regexp.MustCompile(`(?m)^\s*(@java\.lang\.Deprecated|@SuppressWarnings\("deprecation"\))\n\s*public (?:static )?(?:final )?(?:class (\w+)|\S+ (\w+)\()`)
	got := map[string][]string{}
	for _, f := range files {
		class := strings.TrimSuffix(path.Base(f.Name), ".java")
		for _, m := range decl.FindAllStringSubmatch(string(f.Content), -1) {
			got[class] = append(got[class], m[1]+" "+m[2]+m[3])
		}
	}
	const dep, sup = `@java.lang.Deprecated`, `@SuppressWarnings("deprecation")`
	want := map[string][]string{
		"FieldsContract": {sup + " bizKey", dep + " Retired", dep + " Legacy_Inner", dep + " Phase", dep + " Legacy_Mode"},
		"LegacyContract": {sup + " bizKey", dep + " Gone", dep + " Dated"},
		// The whole class is deprecated: nothing inside needs a mark.
		"WholeContract":      {dep + " WholeContract"},
		"WholemultiContract": {dep + " WholemultiContract"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("deprecation marks:\n got %q\nwant %q", got, want)
	}
	for _, f := range files {
		// javac's dep-ann lint: a @deprecated tag needs the annotation.
		if tags, marks := strings.Count(string(f.Content), "* @deprecated "), strings.Count(string(f.Content), dep+"\n"); tags != marks {
			t.Errorf("%s: %d @deprecated Javadoc tags, %d @Deprecated annotations", f.Name, tags, marks)
		}
	}
}
