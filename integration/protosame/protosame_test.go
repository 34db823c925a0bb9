package protosame

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/third_party/protocompile"
	"github.com/msgcontract/msgcontract/third_party/protocompile/linker"
	"github.com/msgcontract/msgcontract/third_party/protocompile/reporter"
	"github.com/msgcontract/msgcontract/third_party/protocompile/walk"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/contracts"
)

var update = flag.Bool("update", false, "rewrite the goldens from this build's output")

const (
	goldenText  = "testdata/golden.txt"
	goldenBytes = "testdata/golden.binpb"
)

// TestCompiledProtosUnchanged compiles every .proto file of the repository
// and of testdata/ one at a time and compares each result with the goldens:
// the deterministic bytes of its FileDescriptorProto (in golden.binpb, a
// FileDescriptorSet), the shape of its options and its errors and warnings
// (golden.txt).
func TestCompiledProtosUnchanged(t *testing.T) {
	root := filepath.Join("..", "..")
	files := protoFiles(t, root)
	if len(files) < 500 {
		t.Fatalf("found %d .proto files under the repository; expected the examples, contracts and testdata (over 500)", len(files))
	}
	var lines []string
	set := &descriptorpb.FileDescriptorSet{}
	for _, f := range files {
		r := compile(t, root, f)
		lines = append(lines, r.lines...)
		if r.fd != nil {
			set.File = append(set.File, r.fd)
		}
	}
	text := strings.Join(lines, "\n") + "\n"
	bin, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(goldenText, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenBytes, bin, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	wantText, err := os.ReadFile(goldenText)
	if err != nil {
		t.Fatal(err)
	}
	if string(wantText) != text {
		want := strings.Split(string(wantText), "\n")
		got := strings.Split(text, "\n")
		for i := 0; i < max(len(want), len(got)); i++ {
			w, g := at(want, i), at(got, i)
			if w != g {
				t.Errorf("golden.txt line %d:\n got: %s\nwant: %s", i+1, g, w)
			}
		}
	}
	wantBin, err := os.ReadFile(goldenBytes)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wantBin, bin) {
		wantSet := &descriptorpb.FileDescriptorSet{}
		if err := proto.Unmarshal(wantBin, wantSet); err != nil {
			t.Fatal(err)
		}
		byName := map[string]*descriptorpb.FileDescriptorProto{}
		for _, fd := range wantSet.File {
			byName[fd.GetName()] = fd
		}
		for _, fd := range set.File {
			if !proto.Equal(fd, byName[fd.GetName()]) {
				t.Errorf("%s: FileDescriptorProto differs from the golden", fd.GetName())
			}
		}
		t.Errorf("golden.binpb differs (%d bytes, want %d)", len(bin), len(wantBin))
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "<none>"
}

// protoFiles lists the .proto files under root, slash-separated and
// relative to it, leaving out other modules' copies (third_party) and
// build output.
func protoFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel == "third_party" || name == "target" || name == "node_modules" || name == "build" ||
				(strings.HasPrefix(name, ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".proto") {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

type result struct {
	fd    *descriptorpb.FileDescriptorProto
	lines []string
}

var packageDecl = regexp.MustCompile(`(?m)^package\s+([\w.]+)\s*;`)

// importRoot is the folder a file's imports are relative to: the one its
// package's path ends in (shop.payment.v1 in .../shop/payment/v1/), else the
// file's own folder.
func importRoot(root, file string, src []byte) (dir, name string) {
	dir, name = filepath.Dir(file), filepath.Base(file)
	if m := packageDecl.FindSubmatch(src); m != nil {
		pkgDir := strings.ReplaceAll(string(m[1]), ".", "/")
		if d := filepath.ToSlash(dir); d == pkgDir || strings.HasSuffix(d, "/"+pkgDir) {
			return strings.TrimSuffix(strings.TrimSuffix(d, pkgDir), "/"), pkgDir + "/" + name
		}
	}
	return dir, name
}

// compile compiles one file as msgcontract's loader does (standard
// imports, msgcontract's embedded protos after the import path, standard
// source info with extra comments, every error reported) and returns its
// descriptor and golden lines.
func compile(t *testing.T, root, file string) result {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	dir, name := importRoot(root, file, src)
	if dir == "" {
		dir = "."
	}
	importPath := filepath.Join(root, filepath.FromSlash(dir))
	var diags []string
	comp := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(protocompile.ResolverFunc(func(path string) (protocompile.SearchResult, error) {
			f, err := os.Open(filepath.Join(importPath, filepath.FromSlash(path)))
			if err == nil {
				return protocompile.SearchResult{Source: f}, nil
			}
			rc, err := contracts.Open(path)
			if err != nil {
				return protocompile.SearchResult{}, err
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				return protocompile.SearchResult{}, err
			}
			return protocompile.SearchResult{Source: bytes.NewReader(b)}, nil
		})),
		SourceInfoMode: protocompile.SourceInfoStandard | protocompile.SourceInfoExtraComments,
		Reporter: reporter.NewReporter(func(err reporter.ErrorWithPos) error {
			diags = append(diags, "error: "+err.Error())
			return nil
		}, func(err reporter.ErrorWithPos) {
			diags = append(diags, "warning: "+err.Error())
		}),
	}
	compiled, err := comp.Compile(context.Background(), name)
	head := file + " as " + name + " in " + dir
	var r result
	if err != nil && !errors.Is(err, reporter.ErrInvalidSource) {
		diags = append(diags, "error: "+err.Error())
	}
	if err == nil {
		fd := compiled[0].(linker.Result).FileDescriptorProto()
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(fd)
		if err != nil {
			t.Fatal(err)
		}
		r.fd = fd
		head += fmt.Sprintf(" bytes %d sha256 %x shape %s locations %s", len(b), sha256.Sum256(b), shape(fd.ProtoReflect()), locations(compiled[0]))
	}
	for i, d := range diags {
		// protobuf-go's errors put a random one of two spaces after
		// "proto:", so that nobody compares them as strings.
		diags[i] = strings.ReplaceAll(d, "\u00a0", " ")
	}
	// Sorted, errors first: warnings come in the order of a map's
	// iteration, and so do the errors found by ranging over a dynamic
	// message's fields (required fields missing in option values).
	slices.SortFunc(diags, func(a, b string) int {
		aw, bw := strings.HasPrefix(a, "warning: "), strings.HasPrefix(b, "warning: ")
		switch {
		case aw && !bw:
			return 1
		case bw && !aw:
			return -1
		}
		return strings.Compare(a, b)
	})
	r.lines = append([]string{head}, indent(diags)...)
	return r
}

func indent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "  " + l
	}
	return out
}

// shape summarizes how the options are held, which equal bytes do not
// show: how many extension fields are set, how many message values are
// dynamic messages, and how many messages carry unknown fields.
func shape(m protoreflect.Message) string {
	var ext, dyn, unknown int
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if len(m.GetUnknown()) > 0 {
			unknown++
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if fd.IsExtension() {
				ext++
			}
			each := func(v protoreflect.Value) {
				msg := v.Message()
				if _, ok := msg.Interface().(*dynamicpb.Message); ok {
					dyn++
				}
				walk(msg)
			}
			switch {
			case fd.IsMap():
				if fd.MapValue().Message() != nil {
					v.Map().Range(func(_ protoreflect.MapKey, v protoreflect.Value) bool { each(v); return true })
				}
			case fd.IsList():
				if fd.Message() != nil {
					for i := 0; i < v.List().Len(); i++ {
						each(v.List().Get(i))
					}
				}
			case fd.Message() != nil:
				each(v)
			}
			return true
		})
	}
	walk(m)
	return fmt.Sprintf("ext=%d dyn=%d unknown=%d", ext, dyn, unknown)
}

// locations hashes what the linked file answers about its source
// locations: every location looked up by its own path (the first of those
// with that path, and where the next one is) and the location of every
// descriptor, which is how msgcontract positions its findings.
func locations(f linker.File) string {
	h := sha256.New()
	locs := f.SourceLocations()
	for i := 0; i < locs.Len(); i++ {
		l := locs.Get(i)
		b := locs.ByPath(l.Path)
		fmt.Fprintf(h, "%v %d:%d-%d:%d next %d; by path %d:%d next %d\n", l.Path, l.StartLine, l.StartColumn, l.EndLine, l.EndColumn, l.Next, b.StartLine, b.StartColumn, b.Next)
	}
	_ = walk.Descriptors(f, func(d protoreflect.Descriptor) error {
		l := locs.ByDescriptor(d)
		fmt.Fprintf(h, "%s %v %d:%d-%d:%d %q %q %q\n", d.FullName(), l.Path, l.StartLine, l.StartColumn, l.EndLine, l.EndColumn, l.LeadingComments, l.TrailingComments, l.LeadingDetachedComments)
		return nil
	})
	return fmt.Sprintf("%d/%x", locs.Len(), h.Sum(nil)[:8])
}
