package generate_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
)

func TestTargets(t *testing.T) {
	p := emit.Params{Paths: "source_relative", Module: "example.com/m", WithPB: true, Version: "v1"}
	for _, tc := range []struct {
		list     string
		dirs     map[string]string
		want     []generate.Target
		wantView string
	}{
		{"java", nil, []generate.Target{{Lang: "java"}}, "java"},
		{"go+java+python", nil, []generate.Target{{"go", "go"}, {"java", "java"}, {"python", "python"}}, "go"},
		{"python+java", map[string]string{"python": "gen/py"}, []generate.Target{{"python", "gen/py"}, {"java", "java"}}, "python"},
		{"java+python", map[string]string{"java": "./src/main/java/", "python": "py/"}, []generate.Target{{"java", "src/main/java"}, {"python", "py"}}, "java"},
	} {
		got, err := generate.Targets(tc.list, tc.dirs, "--lang ")
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("Targets(%q) = %v, %v; want %v", tc.list, got, err, tc.want)
		}
		if view := generate.ViewParams(p, got); view.Lang != tc.wantView {
			t.Errorf("ViewParams for %q: lang %s, want %s", tc.list, view.Lang, tc.wantView)
		}
	}
	// Errors spell the folder settings as the caller's users do.
	abs, same := map[string]string{"java": "/abs"}, map[string]string{"java": "x", "python": "x"}
	for _, tc := range []struct {
		flag, list string
		dirs       map[string]string
		wantErr    string
	}{
		{"lang=", "go+java", abs, `java_dir="/abs": want a relative folder`},
		{"--lang ", "go+java", abs, `--java-dir "/abs": want a relative folder`},
		{"lang=", "python+java", same, `python_dir and java_dir are both "x"`},
		{"--lang ", "python+java", same, `--python-dir and --java-dir are both "x"`},
		{"lang=", "python+java", map[string]string{"java": "x/", "python": "./x"}, `python_dir and java_dir are both "x"`},
		{"--lang ", "go+java", map[string]string{"java": "."}, `--java-dir ".": want a relative folder`},
		{"--lang ", "go+java", map[string]string{"java": "a/../.."}, `--java-dir "a/../..": want a relative folder`},
	} {
		if _, err := generate.Targets(tc.list, tc.dirs, tc.flag); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("Targets(%q, %v, %q): %v; want %q", tc.list, tc.dirs, tc.flag, err, tc.wantErr)
		}
	}
	// One language keeps every parameter (Java honours --paths); beside
	// others, Go alone keeps protoc-gen-go's.
	if got := (generate.Target{Lang: "java"}).Params(p); got.Paths != "source_relative" || got.Module != p.Module || !got.WithPB {
		t.Errorf("single java: %+v", got)
	}
	if got := (generate.Target{Lang: "java", Dir: "java"}).Params(p); got.Paths != "" || got.Module != "" || got.WithPB || got.Version != "v1" {
		t.Errorf("java beside others: %+v", got)
	}
	if got := (generate.Target{Lang: "go", Dir: "go"}).Params(p); got.Paths != p.Paths || got.Module != p.Module || !got.WithPB {
		t.Errorf("go beside others: %+v", got)
	}
}
