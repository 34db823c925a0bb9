package edition2024_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/conformance/toolchain/java"
	"github.com/msgcontract/msgcontract/third_party/protocompile"
	"github.com/msgcontract/msgcontract/third_party/protocompile/linker"
	"github.com/msgcontract/msgcontract/third_party/protocompile/reporter"
)

// protocVersion is the Maven version of the protoc compared with: the
// newest end of the supported range (PROTOBUF), protoc 36.2 today. Moving it
// means refreshing the stored descriptors with -update.
const protocVersion = java.ProtocVersion

var update = flag.Bool("update", false, "write protoc's descriptors of the valid cases as goldens")

var casesDir = filepath.Join("..", "..", "third_party", "protocompile", "testdata", "edition2024")

type testCase struct {
	name, want, main string
	files            map[string]string
}

var header = regexp.MustCompile(`(?m)^-- (\S+) --\n`)

func loadCases(t *testing.T) []testCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(casesDir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []testCase
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c := testCase{name: strings.TrimSuffix(filepath.Base(path), ".txt"), files: map[string]string{}}
		locs := header.FindAllSubmatchIndex(b, -1)
		if len(locs) == 0 {
			t.Fatalf("%s: no sources", path)
		}
		for _, line := range strings.Split(string(b[:locs[0][0]]), "\n") {
			if w, ok := strings.CutPrefix(line, "want: "); ok {
				c.want = w
			}
		}
		for i, loc := range locs {
			end := len(b)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			name := string(b[loc[2]:loc[3]])
			if i == 0 {
				c.main = name
			}
			c.files[name] = string(b[loc[1]:end])
		}
		cases = append(cases, c)
	}
	return cases
}

// featureFiles is a descriptor set of cpp_features.proto and go_features.proto
// as protocompile has them (the first built by protoc 36.2 from its own
// source), which the protobuf-java jar lacks; protoc reads it with
// --descriptor_set_in and finds descriptor.proto under -I.
func featureFiles(t *testing.T, dir string) string {
	t.Helper()
	comp := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{})}
	files, err := comp.Compile(context.Background(), "google/protobuf/cpp_features.proto", "google/protobuf/go_features.proto")
	if err != nil {
		t.Fatal(err)
	}
	set := &descriptorpb.FileDescriptorSet{}
	for _, f := range files {
		set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
	}
	b, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "features.binpb")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// compileOurs compiles the case with protocompile as the table test does.
func compileOurs(c testCase) (*descriptorpb.FileDescriptorProto, []reporter.ErrorWithPos) {
	var errs []reporter.ErrorWithPos
	comp := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: protocompile.SourceAccessorFromMap(c.files),
		}),
		SourceInfoMode: protocompile.SourceInfoStandard,
		Reporter: reporter.NewReporter(func(err reporter.ErrorWithPos) error {
			errs = append(errs, err)
			return nil
		}, nil),
	}
	files, err := comp.Compile(context.Background(), c.main)
	if err != nil {
		if len(errs) == 0 {
			var ewp reporter.ErrorWithPos
			if errors.As(err, &ewp) {
				errs = append(errs, ewp)
			} else {
				errs = append(errs, reporter.Error(nil, err))
			}
		}
		return nil, errs
	}
	return files[0].(linker.Result).FileDescriptorProto(), nil
}

// normalized is fd's deterministic bytes read back with no extensions
// known, as protoc's output is read: custom options as unknown fields.
func normalized(t *testing.T, fd *descriptorpb.FileDescriptorProto) *descriptorpb.FileDescriptorProto {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(fd)
	if err != nil {
		t.Fatal(err)
	}
	return unmarshalFile(t, b)
}

func unmarshalFile(t *testing.T, b []byte) *descriptorpb.FileDescriptorProto {
	t.Helper()
	out := &descriptorpb.FileDescriptorProto{}
	if err := (proto.UnmarshalOptions{Resolver: (*protoregistry.Types)(nil)}).Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// editionPathMoved moves the location of an edition 2023 declaration from
// path 14 (edition), where protocompile has always put it, to path 12
// (syntax), where protoc puts it, and reports whether it did. The one known
// difference, left as it was for 2023 files so that their descriptors do not
// change (files of 2024 and later get path 12 from protocompile too).
func editionPathMoved(fd *descriptorpb.FileDescriptorProto) bool {
	if fd.GetEdition() != descriptorpb.Edition_EDITION_2023 {
		return false
	}
	for _, loc := range fd.GetSourceCodeInfo().GetLocation() {
		if len(loc.Path) == 1 && loc.Path[0] == 14 {
			loc.Path[0] = 12
			return true
		}
	}
	return false
}

var protocErrorPos = regexp.MustCompile(`^[^:\s]+\.proto:(\d+):(\d+): `)

func TestAgainstProtoc(t *testing.T) {
	ctx := context.Background()
	protoc, err := java.ProtocFor(ctx, protocVersion)
	if err != nil {
		hint := ""
		if !strings.Contains(err.Error(), "scripts/setup-java.sh") {
			hint = "\nrun scripts/setup-java.sh"
		}
		t.Fatalf("protoc %s from Maven Central is needed for this test: %v%s", protocVersion, err, hint)
	}
	t.Cleanup(func() { protoc.Close() })
	if out, err := exec.CommandContext(ctx, protoc.Path, "--version").CombinedOutput(); err != nil || !strings.Contains(string(out), strings.TrimPrefix(protocVersion, "4.")) {
		t.Fatalf("protoc %s: --version: %v %s\nrun scripts/setup-java.sh", protocVersion, err, out)
	}
	work := t.TempDir()
	features := featureFiles(t, work)
	cases := loadCases(t)
	var valid, same, knownDiffs, invalid, bothFail, withPos, samePos int
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(work, c.name)
			for name, src := range c.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(work, c.name+".binpb")
			cmd := exec.CommandContext(ctx, protoc.Path, "-I"+dir, "-I"+protoc.Include, "--descriptor_set_in="+features,
				"--include_source_info", "--retain_options", "--descriptor_set_out="+out, c.main)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			protocErr := cmd.Run()
			ours, errs := compileOurs(c)
			if c.want == "ok" {
				valid++
				if protocErr != nil {
					t.Fatalf("protoc: %v\n%s", protocErr, stderr.String())
				}
				if len(errs) > 0 {
					t.Fatalf("protocompile: %v", errs)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				var set descriptorpb.FileDescriptorSet
				if err := (proto.UnmarshalOptions{Resolver: (*protoregistry.Types)(nil)}).Unmarshal(b, &set); err != nil || len(set.File) != 1 {
					t.Fatalf("protoc's descriptor set: %v (%d files)", err, len(set.File))
				}
				theirs, err := proto.MarshalOptions{Deterministic: true}.Marshal(set.File[0])
				if err != nil {
					t.Fatal(err)
				}
				ours = normalized(t, ours)
				if editionPathMoved(ours) {
					knownDiffs++
				}
				if !proto.Equal(ours, unmarshalFile(t, theirs)) {
					t.Fatalf("FileDescriptorProto differs from protoc's\nprotocompile: %v\nprotoc: %v", ours, set.File[0])
				}
				same++
				golden := filepath.Join(casesDir, c.name+".binpb")
				if *update {
					if err := os.WriteFile(golden, theirs, 0o644); err != nil {
						t.Fatal(err)
					}
				} else if g, err := os.ReadFile(golden); err != nil || !proto.Equal(unmarshalFile(t, g), unmarshalFile(t, theirs)) {
					t.Errorf("golden %s is not protoc's descriptor (-update rewrites it): %v", golden, err)
				}
				return
			}
			invalid++
			if protocErr == nil {
				t.Fatalf("protoc compiled it, want %s", c.want)
			}
			if len(errs) == 0 {
				t.Fatalf("protocompile compiled it; protoc: %s", stderr.String())
			}
			bothFail++
			var first string
			for _, line := range strings.Split(stderr.String(), "\n") {
				if line != "" && !strings.Contains(line, ": warning: ") {
					first = line
					break
				}
			}
			m := protocErrorPos.FindStringSubmatch(first)
			if m == nil {
				t.Logf("protoc gives no position: %s", first)
				return
			}
			withPos++
			protocPos := m[1] + ":" + m[2]
			oursPos := fmt.Sprintf("%d:%d", errs[0].GetPosition().Line, errs[0].GetPosition().Col)
			if oursPos != protocPos {
				t.Fatalf("first error at %s, protoc's at %s\nprotocompile: %v\nprotoc: %s", oursPos, protocPos, errs[0], first)
			}
			if !strings.HasPrefix(c.want, "error "+protocPos+": ") {
				t.Fatalf("the case wants %q, protoc's first error is at %s", c.want, protocPos)
			}
			samePos++
		})
	}
	t.Logf("protoc %s: %d cases; %d valid, %d with identical FileDescriptorProtos (%d after moving a 2023 edition declaration's location); %d invalid, %d failing with both, %d with a position from protoc, %d at the same line:col",
		protocVersion, len(cases), valid, same, knownDiffs, invalid, bothFail, withPos, samePos)
}
