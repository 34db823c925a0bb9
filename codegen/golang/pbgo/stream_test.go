package pbgo

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/msgcontract/msgcontract/third_party/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/emit"
)

// compile compiles files of the repository's examples and contracts as
// generate does (protocompile, source info).
func compile(t *testing.T, files ...string) []protoreflect.FileDescriptor {
	t.Helper()
	root := filepath.Join("..", "..", "..")
	comp := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			ImportPaths: []string{filepath.Join(root, "examples", "proto"), filepath.Join(root, "contracts")},
		}),
		SourceInfoMode: protocompile.SourceInfoStandard | protocompile.SourceInfoExtraComments,
	}
	compiled, err := comp.Compile(context.Background(), files...)
	if err != nil {
		t.Fatal(err)
	}
	fds := make([]protoreflect.FileDescriptor, len(compiled))
	for i, f := range compiled {
		fds[i] = f
	}
	return fds
}

// collect returns the files each hands over, in protoc-gen-go's order.
func collect(t *testing.T, each func(func(int, emit.File) error) error) ([]emit.File, error) {
	t.Helper()
	var (
		mu  sync.Mutex
		got = map[int]emit.File{}
	)
	err := each(func(i int, f emit.File) error {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := got[i]; dup {
			t.Errorf("file %d handed over twice", i)
		}
		got[i] = f
		return nil
	})
	out := make([]emit.File, len(got))
	for i, f := range got {
		if i >= len(out) {
			t.Fatalf("file %d of %d", i, len(got))
		}
		out[i] = f
	}
	return out, err
}

// TestEachOfIsResponse: the streamed .pb.go files (formatted one by one,
// on the plugin New builds from protocompile's own protos) are, in name,
// order and bytes, what protogen's Response returns for a plugin built
// from a copied request as protoc-gen-go builds it.
func TestEachOfIsResponse(t *testing.T) {
	t.Parallel()
	files := []string{"shop/payment/v1/payment.proto", "shop/inventory/v1/inventory.proto", "msgcontract/v1/options.proto"}
	for _, p := range []emit.Params{
		{},
		{Paths: "source_relative"},
		{Module: "github.com/msgcontract/msgcontract"},
	} {
		fds := compile(t, files...)
		plugin, err := New(p, fds...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := collect(t, func(fn func(int, emit.File) error) error { return eachOf(plugin, fn) })
		if err != nil {
			t.Fatal(err)
		}
		ref, err := New(p, fds...)
		if err != nil {
			t.Fatal(err)
		}
		ref.Request = Request(Parameter(p), fds...) // a copy, source info kept, as before
		want, err := collect(t, func(fn func(int, emit.File) error) error { return eachOfResponse(ref, fn) })
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(files) || len(got) != len(want) {
			t.Fatalf("%+v: %d files, want %d (%d)", p, len(got), len(want), len(files))
		}
		for i := range want {
			if got[i].Name != want[i].Name || string(got[i].Content) != string(want[i].Content) {
				t.Errorf("%+v: file %d: %s, want %s with the same content", p, i, got[i].Name, want[i].Name)
			}
		}
	}
}

// TestEachOfModuleMismatch: a file outside module= fails as protogen's
// Response fails, and nothing is handed over.
func TestEachOfModuleMismatch(t *testing.T) {
	t.Parallel()
	p := emit.Params{Module: "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment"}
	fds := compile(t, "shop/payment/v1/payment.proto", "shop/inventory/v1/inventory.proto")
	plugin, err := New(p, fds...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(t, func(fn func(int, emit.File) error) error { return eachOf(plugin, fn) })
	ref, refErr := New(p, fds...)
	if refErr != nil {
		t.Fatal(refErr)
	}
	_, want := collect(t, func(fn func(int, emit.File) error) error { return eachOfResponse(ref, fn) })
	if err == nil || want == nil || err.Error() != want.Error() || len(got) != 0 {
		t.Fatalf("error %v and %d files, want %v and none", err, len(got), want)
	}
	if !strings.Contains(err.Error(), "does not match prefix") {
		t.Fatalf("error %v and %d files, want %v and none", err, len(got), want)
	}
}

// TestEachOfKeepsNoFile: EachOf writes each file into a copy of the view,
// so the view, which lint and the Go emitter share and which lives as
// long as the run, holds none of protoc-gen-go's output afterwards
// (protogen keeps every file a plugin writes until its Response).
func TestEachOfKeepsNoFile(t *testing.T) {
	t.Parallel()
	plugin, err := New(emit.Params{}, compile(t, "shop/payment/v1/payment.proto", "shop/inventory/v1/inventory.proto")...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(t, func(fn func(int, emit.File) error) error { return eachOf(plugin, fn) })
	if err != nil || len(got) != 2 {
		t.Fatalf("%d files (%v), want 2", len(got), err)
	}
	// protogen's list of the files a plugin wrote is not exported.
	held := reflect.ValueOf(plugin).Elem().FieldByName("genFiles")
	if !held.IsValid() {
		t.Fatal("protogen.Plugin has no genFiles any more: check that EachOf's copies still hold what the view would")
	}
	if held.Len() != 0 {
		t.Fatalf("the view holds %d generated files, want none", held.Len())
	}
}
