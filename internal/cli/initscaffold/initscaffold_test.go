package initscaffold

import (
	"bytes"
	"flag"
	"go/format"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenVersion is not VERSION, so that a release does not rewrite the goldens.
const goldenVersion = "9.8.7"

// TestGolden renders each language's scaffold for a service "payments" and
// compares every file with testdata/golden/<lang>/<path>.golden; the set of
// files must match too.
func TestGolden(t *testing.T) {
	for _, lang := range Langs {
		t.Run(lang, func(t *testing.T) {
			files, err := Render(Options{Lang: lang, Name: "payments", Version: goldenVersion})
			if err != nil {
				t.Fatal(err)
			}
			root := filepath.Join("testdata", "golden", lang)
			if *update {
				if err := os.RemoveAll(root); err != nil {
					t.Fatal(err)
				}
				for p, b := range files {
					full := filepath.Join(root, filepath.FromSlash(p)+".golden")
					if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(full, b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			var want []string
			err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(root, p)
				want = append(want, strings.TrimSuffix(filepath.ToSlash(rel), ".golden"))
				return nil
			})
			if err != nil {
				t.Fatalf("%v (run go test ./internal/cli/initscaffold -update)", err)
			}
			var got []string
			for p := range files {
				got = append(got, p)
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("files differ from %s (refresh with -update if intended)\ngot:\n%s\nwant:\n%s", root, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for _, p := range want {
				golden, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)+".golden"))
				if err != nil {
					t.Fatal(err)
				}
				if b, ok := files[p]; ok && !bytes.Equal(b, golden) {
					t.Errorf("%s differs from its golden file (refresh with -update if intended)\ngot:\n%s", p, b)
				}
			}
		})
	}
}

// TestRenderedFiles checks what each scaffold must hold, whatever its
// wording: the runtime of the given version, the protoc line with
// msgcontract include, the name everywhere, gofmt-clean Go and no
// unrendered template text.
func TestRenderedFiles(t *testing.T) {
	wantIn := map[string]map[string][]string{
		"go": {
			"go.mod":   {"module example.com/orders_svc\n", "require github.com/msgcontract/msgcontract/runtime-go v1.2.3\n"},
			"Makefile": {`-I "$$(msgcontract include)"`, "msgcontract generate --lang go"},
			"main.go":  {`orders_svcv1 "example.com/orders_svc/gen/orders_svc/v1"`, "RegisterOrderPaidHandler", "PublishOrderPaid", "sqlitequeue"},
		},
		"java": {
			"pom.xml":  {"<artifactId>msgcontract-runtime</artifactId>", "<msgcontract.version>1.2.3</msgcontract.version>", "protobuf-maven-plugin"},
			"Makefile": {`-I "$$(msgcontract include)"`},
			"src/main/java/com/example/orders_svc/Main.java": {"OrdersSvcContract.OrderPaid.SPEC", "package com.example.orders_svc;"},
		},
		"python": {
			"pyproject.toml": {`"msgcontract-runtime==1.2.3"`, "[tool.mypy]", "strict = true", "explicit_package_bases = true", `module = ["orders_svc.v1.orders_svc_pb2"]`},
			"Makefile":       {`-I "$$(msgcontract include)"`, "msgcontract generate --lang python"},
			"main.py":        {"from orders_svc.v1 import orders_svc_msgcontract as contract, orders_svc_pb2"},
		},
	}
	for _, lang := range Langs {
		t.Run(lang, func(t *testing.T) {
			// A leading v is a release too (buildinfo.Version may carry one).
			files, err := Render(Options{Lang: lang, Name: "orders_svc", Version: "v1.2.3"})
			if err != nil {
				t.Fatal(err)
			}
			for _, common := range []string{"proto/orders_svc/v1/orders_svc.proto", "buf.yaml", "buf.gen.yaml", "README.md", ".gitignore", "Makefile"} {
				if _, ok := files[common]; !ok {
					t.Errorf("no %s", common)
				}
			}
			proto := string(files["proto/orders_svc/v1/orders_svc.proto"])
			for _, s := range []string{"package orders_svc.v1;", "biz_key:", "error_ranges:", "retry:", `import "msgcontract/v1/options.proto";`} {
				if !strings.Contains(proto, s) {
					t.Errorf("the contract lacks %q", s)
				}
			}
			if !strings.Contains(string(files["buf.gen.yaml"]), "directory: proto") {
				t.Errorf("buf.gen.yaml does not limit its input to proto/ (it would generate the options' own code)")
			}
			for p, subs := range wantIn[lang] {
				for _, s := range subs {
					if !strings.Contains(string(files[p]), s) {
						t.Errorf("%s lacks %q:\n%s", p, s, files[p])
					}
				}
			}
			for p, b := range files {
				if bytes.Contains(b, []byte("{{")) || bytes.Contains(b, []byte("<no value>")) {
					t.Errorf("%s holds unrendered template text", p)
				}
				if strings.HasSuffix(p, ".go") {
					if f, err := format.Source(b); err != nil || !bytes.Equal(f, b) {
						t.Errorf("%s is not gofmt-formatted (%v)", p, err)
					}
				}
			}
		})
	}
}

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"payments", "orders_svc", "a1"} {
		if err := ValidateName(ok); err != nil {
			t.Errorf("ValidateName(%q) = %v, want nil", ok, err)
		}
	}
	for bad, hint := range map[string]string{
		"my-service": "--name my_service", "Payments": "--name payments", "1st": "--name svc_1st",
		"": "--name payments", "class": "--name class_service", "msgcontract": "--name msgcontract_service",
		"import": "--name import_service",
	} {
		err := ValidateName(bad)
		if err == nil || !strings.Contains(err.Error(), hint) {
			t.Errorf("ValidateName(%q) = %v, want an error suggesting %q", bad, err, hint)
		}
	}
}

func TestRenderRejects(t *testing.T) {
	if _, err := Render(Options{Lang: "rust", Name: "p", Version: "1.0.0"}); err == nil || !strings.Contains(err.Error(), "go, java, python") {
		t.Errorf("unknown language: %v", err)
	}
	if _, err := Render(Options{Lang: "go", Name: "p", Version: "dev"}); err == nil {
		t.Errorf("version dev rendered; init must resolve it to a release first")
	}
}

// TestGoDirective: the Go scaffold's go directive is runtime-go's, which a
// service requiring it cannot go below.
func TestGoDirective(t *testing.T) {
	runtimeMod, err := os.ReadFile(filepath.Join("..", "..", "..", "runtime-go", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Render(Options{Lang: "go", Name: "payments", Version: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	directive := func(gomod []byte) string {
		for _, line := range strings.Split(string(gomod), "\n") {
			if strings.HasPrefix(line, "go ") {
				return line
			}
		}
		return ""
	}
	if got, want := directive(files["go.mod"]), directive(runtimeMod); got != want || want == "" {
		t.Errorf("the scaffold's go.mod says %q, runtime-go's %q (templates/go/go.mod.tmpl)", got, want)
	}
}
