package plugin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/golang"
	"github.com/msgcontract/msgcontract/codegen/golang/pbgo"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/codegen/plugin"
	"github.com/msgcontract/msgcontract/internal/examplegen"
)

// badContract has findings of every language's lint: a biz_key on a
// double, a generated Go name taken (ESpec) and a Python keyword (None).
const badContract = `syntax = "proto3";
package bad;
import "msgcontract/v1/options.proto";
option go_package = "example.com/bad";
message E {
  option (msgcontract.v1.event) = { topic: "t" event_type: "E" biz_key: "{amount}" };
  double amount = 1;
}
message ESpec { string id = 1; }
enum Kind { KIND_UNSPECIFIED = 0; None = 1; }`

// loadContract compiles one contract file from source.
func loadContract(t *testing.T, path, src string) *model.Set {
	t.Helper()
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{path: src}}, path)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func loadExamples(t *testing.T) *model.Set {
	t.Helper()
	set, err := examplegen.Load(context.Background(), filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// loadExampleDescs is loadExamples and its files' descriptors, the files
// a plugin request carries.
func loadExampleDescs(t *testing.T) (*model.Set, []protoreflect.FileDescriptor) {
	t.Helper()
	set := loadExamples(t)
	fds := make([]protoreflect.FileDescriptor, len(set.Files))
	for i, f := range set.Files {
		fds[i] = f.Desc
	}
	return set, fds
}

// TestGenerateMatchesCLI: the plugin, given the request protoc would send,
// writes what generate.Run writes for the CLI, for every parameter form.
func TestGenerateMatchesCLI(t *testing.T) {
	t.Parallel()
	set, fds := loadExampleDescs(t)
	tests := []struct {
		param   string
		params  emit.Params
		wantErr string
	}{
		{param: "", params: emit.Params{Lang: "go"}},
		{param: "lang=go,paths=source_relative", params: emit.Params{Lang: "go", Paths: "source_relative"}},
		{param: "module=github.com/msgcontract/msgcontract", params: emit.Params{Lang: "go", Module: "github.com/msgcontract/msgcontract"}},
		{param: "lang=go,colour=blue", wantErr: "no such flag -colour"},
		{param: "lang=cobol", wantErr: `unknown language "cobol"`},
		{param: "paths=sideways", wantErr: `unknown path type "sideways"`},
		{param: "Mshop/payment/v1/payment.proto=example.com/pay;pay", params: emit.Params{Lang: "go"}},
	}
	for _, tc := range tests {
		t.Run(tc.param, func(t *testing.T) {
			t.Parallel()
			resp := plugin.Generate(pbgo.Request(tc.param, fds...), "v9")
			if tc.wantErr != "" {
				if !strings.Contains(resp.GetError(), tc.wantErr) {
					t.Fatalf("error = %q, want one containing %q", resp.GetError(), tc.wantErr)
				}
				return
			}
			if resp.Error != nil {
				t.Fatal(resp.GetError())
			}
			if strings.HasPrefix(tc.param, "M") {
				if got := resp.File[0].GetName(); got != "example.com/pay/payment.msgcontract.go" {
					t.Fatalf("M mapping ignored: %s", got)
				}
				if !strings.Contains(resp.File[0].GetContent(), "\npackage pay\n") {
					t.Fatal("M mapping's package name ignored")
				}
				return
			}
			tc.params.Version = "v9"
			want, err := generate.Run(set, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.File) != len(want) {
				t.Fatalf("%d files, want %d", len(resp.File), len(want))
			}
			for i, f := range resp.File {
				if f.GetName() != want[i].Name || f.GetContent() != string(want[i].Content) {
					t.Errorf("%s differs from the CLI's %s", f.GetName(), want[i].Name)
				}
			}
		})
	}
}

func TestGenerateRefusesLintErrors(t *testing.T) {
	t.Parallel()
	set := loadContract(t, "bad.proto", badContract)
	resp := plugin.Generate(pbgo.Request("", set.Files[0].Desc), "dev")
	if !strings.Contains(resp.GetError(), "BIZKEY_FIELD_TYPE") {
		t.Fatalf("error = %q, want the lint finding", resp.GetError())
	}
}

// TestOtherLangsNeedNoGoPackage: only lang=go asks protogen for Go
// packages, so Java and Python contracts need no go_package.
func TestOtherLangsNeedNoGoPackage(t *testing.T) {
	t.Parallel()
	set := loadContract(t, "shop/v1/paid.proto", `syntax = "proto3";
package shop.v1;
import "msgcontract/v1/options.proto";
option java_package = "com.example.shop.v1";
option java_multiple_files = true;
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
}`)
	for _, lang := range []string{"java", "python"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			resp := plugin.Generate(pbgo.Request("lang="+lang, set.Files[0].Desc), "dev")
			if resp.Error != nil {
				t.Fatal(resp.GetError())
			}
			want, err := generate.Run(set, emit.Params{Lang: lang, Version: "dev"})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.File) != len(want) || len(want) == 0 {
				t.Fatalf("%d files, want %d", len(resp.File), len(want))
			}
			for i, f := range resp.File {
				if f.GetName() != want[i].Name || f.GetContent() != string(want[i].Content) {
					t.Errorf("%s differs from the CLI's %s", f.GetName(), want[i].Name)
				}
			}
		})
	}
}

// TestPlainFilesCostNothing: files that cannot carry msgcontract options
// (no import of options.proto) are left out before anything is built, so
// they generate nothing and their problems are protoc-gen-go's (here a
// missing go_package), while contracts beside them generate as alone.
func TestPlainFilesCostNothing(t *testing.T) {
	t.Parallel()
	set := loadExamples(t)
	plain, err := model.Load(context.Background(), model.Config{Sources: map[string]string{
		"plain/v1/plain.proto": "syntax = \"proto3\";\npackage plain.v1;\nmessage Plain { string id = 1; }\n",
		"plain/v1/reexport.proto": "syntax = \"proto3\";\npackage plain.v1;\n" +
			"import public \"msgcontract/v1/options.proto\";\n",
	}}, "plain/v1/plain.proto", "plain/v1/reexport.proto")
	if err != nil {
		t.Fatal(err)
	}
	alone := plugin.Generate(pbgo.Request("", set.Descriptors()...), "dev")
	mixed := plugin.Generate(pbgo.Request("", append(plain.Descriptors()[:1:1], set.Descriptors()...)...), "dev")
	if alone.Error != nil || mixed.Error != nil {
		t.Fatalf("errors: %q, %q", alone.GetError(), mixed.GetError())
	}
	if len(alone.File) == 0 || len(mixed.File) != len(alone.File) {
		t.Fatalf("%d files with a plain file beside, %d alone", len(mixed.File), len(alone.File))
	}
	for i, f := range mixed.File {
		if f.GetName() != alone.File[i].GetName() || f.GetContent() != alone.File[i].GetContent() {
			t.Errorf("%s differs with a plain file beside", f.GetName())
		}
	}
	if resp := plugin.Generate(pbgo.Request("", plain.Descriptors()[0]), "dev"); resp.Error != nil || len(resp.File) != 0 {
		t.Fatalf("plain file alone: error %q, %d files", resp.GetError(), len(resp.File))
	}
	if resp := plugin.Generate(pbgo.Request("lang=cobol", plain.Descriptors()[0]), "dev"); !strings.Contains(resp.GetError(), "cobol") {
		t.Fatalf("bad parameter with plain files only: error %q", resp.GetError())
	}
	// A file that sees the options through a public import can carry
	// contracts, but this one declares none: it has no Go output, so its
	// missing go_package is no error (TestUnplacedFiles).
	if resp := plugin.Generate(pbgo.Request("", plain.Descriptors()[1]), "dev"); resp.Error != nil || len(resp.File) != 0 {
		t.Fatalf("public import, no contract: error %q, %d files", resp.GetError(), len(resp.File))
	}
}

// unplacedSources are contract-capable files without go_package: one
// without contracts, one with an event importing a plain file, and a
// contract file with a go_package.
var unplacedSources = map[string]string{
	"u/v1/quiet.proto": `syntax = "proto3";
package u.v1;
import "msgcontract/v1/options.proto";
message Quiet { string id = 1; }`,
	"u/v1/plain.proto": `syntax = "proto3";
package u.v1;
message Plain { string id = 1; }`,
	"u/v1/paid.proto": `syntax = "proto3";
package u.v1;
import "msgcontract/v1/options.proto";
import "u/v1/plain.proto";
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
  Plain plain = 2;
}`,
	"w/v1/shipped.proto": `syntax = "proto3";
package w.v1;
import "msgcontract/v1/options.proto";
option go_package = "example.com/w/v1;wv1";
message Shipped {
  option (msgcontract.v1.event) = { topic: "t" event_type: "SHIPPED" biz_key: "{id}" };
  string id = 1;
}`,
}

// TestUnplacedFiles: lang=go leaves out files without Go output and
// without Go import path (no go_package, no M mapping) instead of failing
// on them in protogen, as the CLI does (#43), and writes what the CLI
// writes for the same files and mappings; a file with Go output, or one
// it imports, without an import path fails in both (protogen names the
// import first, the CLI the file with Go output).
func TestUnplacedFiles(t *testing.T) {
	t.Parallel()
	const mapped = "Mu/v1/paid.proto=example.com/u/v1;uv1,Mu/v1/plain.proto=example.com/u/v1;uv1"
	mappings := map[string]string{"u/v1/paid.proto": "example.com/u/v1;uv1", "u/v1/plain.proto": "example.com/u/v1;uv1"}
	tests := []struct {
		files              []string
		param              string
		params             emit.Params
		wantErr, pluginErr string
	}{
		{files: []string{"u/v1/quiet.proto"}},
		{files: []string{"u/v1/quiet.proto", "w/v1/shipped.proto"}},
		{files: []string{"w/v1/shipped.proto", "u/v1/quiet.proto"}, param: "paths=source_relative", params: emit.Params{Paths: "source_relative"}},
		{files: []string{"u/v1/paid.proto"}, wantErr: "u/v1/paid.proto", pluginErr: "u/v1/plain.proto"},
		{files: []string{"u/v1/paid.proto"}, param: "Mu/v1/paid.proto=example.com/u/v1",
			params: emit.Params{GoImportPaths: map[string]string{"u/v1/paid.proto": "example.com/u/v1"}}, wantErr: "u/v1/plain.proto", pluginErr: "u/v1/plain.proto"},
		{files: []string{"u/v1/paid.proto", "u/v1/quiet.proto", "w/v1/shipped.proto"}, param: mapped, params: emit.Params{GoImportPaths: mappings}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.files, "+")+","+tc.param, func(t *testing.T) {
			t.Parallel()
			set, err := model.Load(context.Background(), model.Config{Sources: unplacedSources}, tc.files...)
			if err != nil {
				t.Fatal(err)
			}
			generate.Lint(set)
			resp := plugin.Generate(pbgo.Request(tc.param, set.Descriptors()...), "v9")
			tc.params.Lang, tc.params.Version = "go", "v9"
			want, err := generate.Run(set, tc.params)
			if tc.wantErr != "" {
				var missing *golang.ImportPathError
				if !errors.As(err, &missing) || missing.File != tc.wantErr {
					t.Errorf("CLI: error %v, want an ImportPathError for %s", err, tc.wantErr)
				}
				if !strings.Contains(resp.GetError(), `unable to determine Go import path for "`+tc.pluginErr+`"`) {
					t.Errorf("plugin: error %q, want protogen's for %s", resp.GetError(), tc.pluginErr)
				}
				return
			}
			if err != nil || resp.Error != nil {
				t.Fatalf("CLI: %v; plugin: %q", err, resp.GetError())
			}
			if len(resp.File) != len(want) {
				t.Fatalf("%d files, want the CLI's %d", len(resp.File), len(want))
			}
			for i, f := range resp.File {
				if f.GetName() != want[i].Name || f.GetContent() != string(want[i].Content) {
					t.Errorf("%s differs from the CLI's %s", f.GetName(), want[i].Name)
				}
			}
		})
	}
}

// TestEveryLangRunsGoChecks: the plugin lints a contract for every
// language whatever it generates, so lang=java and lang=python refuse a
// contract Go cannot represent with the finding the CLI gives, though their
// Go view is built from protoc's request and not from the model. (Other
// findings point at their option in the CLI, which has the AST, and at the
// element in the plugin.)
func TestEveryLangRunsGoChecks(t *testing.T) {
	t.Parallel()
	set := loadContract(t, "bad.proto", badContract)
	generate.Lint(set)
	for _, lang := range generate.Langs {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			_, err := generate.Run(set, emit.Params{Lang: lang, Version: "dev"})
			want := goFindings(fmt.Sprint(err))
			if want == "" {
				t.Fatalf("the CLI's error = %v, want GO_NAME_COLLISION", err)
			}
			resp := plugin.Generate(pbgo.Request("lang="+lang+",paths=source_relative", set.Descriptors()...), "dev")
			if got := goFindings(resp.GetError()); got != want {
				t.Fatalf("plugin's Go findings:\n%s\nwant the CLI's:\n%s", got, want)
			}
		})
	}
}

// goFindings are the GO_NAME_COLLISION lines of a lint error.
func goFindings(err string) string {
	var lines []string
	for _, l := range strings.Split(err, "\n") {
		if strings.Contains(l, "GO_NAME_COLLISION") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// TestAnswerIsMarshalledGenerate: Answer writes the response's files
// itself; its bytes are proto.Marshal's of Generate's response, for every
// language, for a request with plain files left out and for a failure.
func TestAnswerIsMarshalledGenerate(t *testing.T) {
	t.Parallel()
	set := loadExamples(t)
	plain, err := model.Load(context.Background(), model.Config{Sources: map[string]string{
		"plain/v1/plain.proto": "syntax = \"proto3\";\npackage plain.v1;\nmessage Plain { string id = 1; }\n",
	}}, "plain/v1/plain.proto")
	if err != nil {
		t.Fatal(err)
	}
	reqs := map[string]*pluginpb.CodeGeneratorRequest{
		"with a plain file": pbgo.Request("lang=go", append(plain.Descriptors(), set.Descriptors()...)...),
		"failing":           pbgo.Request("lang=cobol", set.Descriptors()...),
	}
	// Lint findings are positioned from source info, which Answer narrows.
	bad := loadContract(t, "bad.proto", badContract)
	for _, lang := range generate.Langs {
		reqs["failing lint "+lang] = pbgo.Request("lang="+lang, bad.Descriptors()...)
	}
	for _, lang := range generate.Langs {
		reqs[lang] = pbgo.Request("lang="+lang, set.Descriptors()...)
	}
	// protoc 24 and later send the files to generate again as
	// source_file_descriptors, which Answer drops unread.
	withSource := pbgo.Request("lang=java", set.Descriptors()...)
	for _, f := range withSource.ProtoFile {
		withSource.SourceFileDescriptors = append(withSource.SourceFileDescriptors, proto.Clone(f).(*descriptorpb.FileDescriptorProto))
	}
	reqs["source file descriptors"] = withSource
	for name, req := range reqs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := proto.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := plugin.Answer(raw, "dev", &out); err != nil {
				t.Fatal(err)
			}
			got := out.Bytes()
			resp := plugin.Generate(req, "dev")
			want, err := proto.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(name, "failing") != (resp.Error != nil) || (resp.Error == nil && len(resp.File) == 0) {
				t.Fatalf("error %q, %d files", resp.GetError(), len(resp.File))
			}
			if strings.HasPrefix(name, "failing lint") && (!strings.Contains(resp.GetError(), "bad.proto:6:3: BIZKEY_FIELD_TYPE") ||
				!strings.HasPrefix(resp.GetError(), "contracts have 3 lint errors (msgcontract lint on the same files points inside option values):\n")) {
				t.Fatalf("error %q, want the count and a positioned BIZKEY_FIELD_TYPE", resp.GetError())
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Answer's %d bytes differ from the %d of proto.Marshal(Generate(req))", len(got), len(want))
			}
		})
	}
}

// TestAnswerReportsAFailingOutput: the response streams to its writer, so
// a writer that fails part way (protoc gone) is an error, not a silent
// half response.
func TestAnswerReportsAFailingOutput(t *testing.T) {
	t.Parallel()
	raw, err := proto.Marshal(pbgo.Request("lang=go", loadExamples(t).Descriptors()...))
	if err != nil {
		t.Fatal(err)
	}
	var whole bytes.Buffer
	if err := plugin.Answer(raw, "dev", &whole); err != nil {
		t.Fatal(err)
	}
	broken := errors.New("broken pipe")
	for _, at := range []int{0, 1, whole.Len() / 2, whole.Len() - 1} {
		w := &failingWriter{room: at, err: broken}
		if err := plugin.Answer(raw, "dev", w); !errors.Is(err, broken) {
			t.Fatalf("writer failing after %d of %d bytes: Answer returned %v", at, whole.Len(), err)
		}
	}
}

// failingWriter takes room bytes, then fails with err.
type failingWriter struct {
	room int
	err  error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.room {
		n := w.room
		w.room = 0
		return n, w.err
	}
	w.room -= len(p)
	return len(p), nil
}

// TestSeveralLangsInOneInvocation: lang=go+java+python writes what three
// invocations write (paths= and module= being Go's), each language under
// its folder, and refuses a language named twice or a folder outside the
// output or shared.
func TestSeveralLangsInOneInvocation(t *testing.T) {
	t.Parallel()
	_, fds := loadExampleDescs(t)
	answer := func(param string) []*pluginpb.CodeGeneratorResponse_File {
		t.Helper()
		resp := plugin.Generate(pbgo.Request(param, fds...), "v9")
		if resp.Error != nil {
			t.Fatalf("%s: %s", param, resp.GetError())
		}
		return resp.File
	}
	for _, tc := range []struct {
		param string
		dirs  map[string]string
	}{
		{"lang=go+java+python,paths=source_relative", map[string]string{"go": "go", "java": "java", "python": "python"}},
		{"lang=python+go,go_dir=gen/go,python_dir=py,module=github.com/msgcontract/msgcontract",
			map[string]string{"go": "gen/go", "python": "py"}},
	} {
		want := map[string]string{}
		for lang, dir := range tc.dirs {
			single := "lang=" + lang // paths= and module= are Go's alone
			if lang == "go" {
				single = strings.NewReplacer("lang=go+java+python", "lang=go", "lang=python+go", "lang=go").Replace(tc.param)
			}
			for _, f := range answer(single) {
				want[dir+"/"+f.GetName()] = f.GetContent()
			}
		}
		got := answer(tc.param)
		if len(got) != len(want) {
			t.Errorf("%s: %d files, want %d", tc.param, len(got), len(want))
		}
		for _, f := range got {
			if w, ok := want[f.GetName()]; !ok || w != f.GetContent() {
				t.Errorf("%s: %s is not what its language's own invocation writes there", tc.param, f.GetName())
			}
		}
	}
	for param, wantErr := range map[string]string{
		"lang=go+go":                       "names go twice",
		"lang=go+cobol":                    `unknown language "cobol"`,
		"lang=go+java,go_dir=../elsewhere": `go_dir="../elsewhere": want a relative folder`,
		"lang=go+java,java_dir=.":          `java_dir=".": want a relative folder`,
		"lang=go+java,go_dir=x,java_dir=x": `go_dir and java_dir are both "x"`,
	} {
		resp := plugin.Generate(pbgo.Request(param, fds...), "v9")
		if !strings.Contains(resp.GetError(), wantErr) {
			t.Errorf("%s: error = %q, want one containing %q", param, resp.GetError(), wantErr)
		}
	}
}
