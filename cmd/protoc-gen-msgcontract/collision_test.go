package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/golang/pbgo"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/codegen/plugin"
	"github.com/msgcontract/msgcontract/internal/cli"
)

// collisionProto is a contract file of proto package pkg with options and
// one event, msg.
func collisionProto(pkg, options, msg string) string {
	return "syntax = \"proto3\";\n\npackage " + pkg + ";\n\nimport \"msgcontract/v1/options.proto\";\n\n" + options +
		"\nmessage " + msg + " {\n  option (msgcontract.v1.event) = { topic: \"t\" event_type: \"E\" biz_key: \"{id}\" };\n  string id = 1;\n}\n"
}

// TestCollisionsRefusedAlike: inputs that would generate one output twice
// (two Java contract classes of one name, a contract class named like
// another file's outer class, two files that are one Python module, two
// Go files of one package and name) are refused by msgcontract generate
// (nothing written, a non-zero exit) and by the plugin, in process and
// under protoc when it is on PATH, with the same text.
func TestCollisionsRefusedAlike(t *testing.T) {
	goPackage := "option go_package = \"example.com/p;p\";\n"
	shared := goPackage + "option java_package = \"com.example.shared\";\noption java_outer_classname = \"Shared\";\n"
	tests := []struct {
		name  string
		lang  string
		files []string // name, content, ...
		want  string   // in each line of the refusal the two must share
	}{
		{"java contract class twice", "java",
			[]string{"a/one.proto", collisionProto("a", shared, "Created"), "b/two.proto", collisionProto("b", shared, "Deleted")},
			"b/two.proto:1:1: JAVA_CLASS_COLLISION: contract class com.example.shared.SharedContract is also generated for a/one.proto"},
		{"java contract class is an outer class", "java",
			// The plugin sees the files that can hold contracts and their
			// imports: order_contract.proto is imported.
			[]string{"shop/order.proto", collisionProto("shop", "import \"shop/order_contract.proto\";\noption java_package = \"com.example.shop\";\n", "Placed"),
				"shop/order_contract.proto", "syntax = \"proto3\";\npackage shop;\noption java_package = \"com.example.shop\";\nmessage Line { string sku = 1; }\n"},
			"shop/order.proto:1:1: JAVA_CLASS_COLLISION: contract class com.example.shop.OrderContract of this file is also the outer class of shop/order_contract.proto"},
		{"python module twice", "python",
			[]string{"shop/order-v1.proto", collisionProto("a", "", "Placed"), "shop/order_v1.proto", collisionProto("b", "", "Placed")},
			"shop/order_v1.proto:1:1: PYTHON_MODULE_COLLISION: this file and shop/order-v1.proto are both the Python module shop.order_v1"},
		{"go file twice", "go",
			[]string{"a/x.proto", collisionProto("a", goPackage, "Created"), "b/x.proto", collisionProto("b", goPackage, "Deleted")},
			"a/x.proto and b/x.proto both generate example.com/p/x.msgcontract.go"},
	}
	protoc, _ := exec.LookPath("protoc")
	var pluginBin string
	if protoc != "" {
		pluginBin = filepath.Join(t.TempDir(), "protoc-gen-msgcontract")
		if out, err := exec.Command("go", "build", "-o", pluginBin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	contracts, err := filepath.Abs(filepath.Join(repoRoot, "contracts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			for i := 0; i < len(tc.files); i += 2 {
				writeFile(t, filepath.Join(dir, filepath.FromSlash(tc.files[i])), tc.files[i+1])
				files = append(files, tc.files[i])
			}
			// Relative paths from the import root: the CLI shows files as
			// named, the plugin by import path, here the same.
			t.Chdir(dir)

			out := filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			args := append([]string{"generate", "--lang", tc.lang, "--out", out, "-I", "."}, files...)
			code := cli.Execute(context.Background(), args, &stdout, &stderr)
			if code == 0 {
				t.Errorf("msgcontract generate exited 0, wrote:\n%s", stdout.String())
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("msgcontract generate wrote %s", out)
			}

			set, err := model.Load(context.Background(), model.Config{ImportPaths: []string{"."}}, files...)
			if err != nil {
				t.Fatal(err)
			}
			resp := plugin.Generate(pbgo.Request("lang="+tc.lang, set.Descriptors()...), "v")
			refusal := resp.GetError()
			if refusal == "" {
				t.Fatalf("the plugin accepted the files, answering %d files", len(resp.File))
			}
			var lines []string
			for _, l := range strings.Split(refusal, "\n") {
				if strings.Contains(l, tc.want) {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 {
				t.Fatalf("the plugin's refusal has %d lines with %q, want 1:\n%s", len(lines), tc.want, refusal)
			}
			if !strings.Contains(stderr.String(), lines[0]) {
				t.Errorf("msgcontract generate's refusal lacks the plugin's\n%s\nstderr:\n%s", lines[0], stderr.String())
			}

			if protoc == "" {
				t.Log("protoc not on PATH: the plugin was run in process only")
				return
			}
			viaProtoc := t.TempDir()
			cmd := exec.Command(protoc, append([]string{"--plugin=protoc-gen-msgcontract=" + pluginBin,
				"-I", ".", "-I", contracts, "--msgcontract_out=lang=" + tc.lang + ":" + viaProtoc}, files...)...)
			got, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("protoc accepted the files:\n%s", got)
			}
			if !bytes.Contains(got, []byte(lines[0])) {
				t.Errorf("protoc's refusal lacks the plugin's\n%s\nprotoc:\n%s", lines[0], got)
			}
		})
	}
}
