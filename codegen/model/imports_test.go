package model_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// manyImports writes, under a fresh directory, main.proto importing 64
// files from disk, and returns the import path and main.proto's path.
// protocompile resolves the imports of a file from parallel goroutines,
// each calling the loader's resolver; when broken is set, every eighth
// import does not compile, so the error reporter runs while other imports
// are still being resolved.
func manyImports(t *testing.T, broken bool) (dir, main string) {
	t.Helper()
	dir = t.TempDir()
	var imports, fields strings.Builder
	for i := range 64 {
		body := fmt.Sprintf("message Dep%02d { string id = 1; }\n", i)
		if broken && i%8 == 0 {
			body = fmt.Sprintf("message Dep%02d { Missing%02d id = 1; }\n", i, i)
		}
		write(t, filepath.Join(dir, "deps", fmt.Sprintf("dep%02d.proto", i)),
			[]byte("syntax = \"proto3\";\npackage deps.v1;\n"+body))
		fmt.Fprintf(&imports, "import \"deps/dep%02d.proto\";\n", i)
		fmt.Fprintf(&fields, "  deps.v1.Dep%02d d%02d = %d;\n", i, i, i+2)
	}
	main = filepath.Join(dir, "shop", "main.proto")
	write(t, main, []byte(`syntax = "proto3";
package shop.v1;
import "msgcontract/v1/options.proto";
`+imports.String()+`
message Placed {
  option (msgcontract.v1.event) = { topic: "orders" event_type: "PLACED" biz_key: "{id}" };
  string id = 1;
`+fields.String()+"}\n"))
	return dir, main
}

// loadManyImports loads main.proto n times and checks every result: the
// model when the imports compile, positioned errors (at the path on disk
// the user knows the file by) when they do not. protocompile gives up on
// main.proto at the first failed import it waits for, so how many of the
// eight broken imports are reported depends on timing; at least one is.
func loadManyImports(t *testing.T, n int, broken bool) {
	t.Helper()
	dir, main := manyImports(t, broken)
	cfg := model.Config{ImportPaths: []string{dir}}
	for range n {
		set, err := model.Load(context.Background(), cfg, main)
		if broken {
			var ce *model.CompileError
			if !errors.As(err, &ce) || len(ce.Errors) == 0 || len(ce.Errors) > 8 {
				t.Fatalf("err = %v, want 1 to 8 positioned errors", err)
			}
			for _, e := range ce.Errors {
				if !strings.HasPrefix(e, filepath.Join(dir, "deps", "dep")) || !strings.Contains(e, ": unknown type Missing") {
					t.Fatalf("error %q, want one of a broken import, positioned at its path on disk", e)
				}
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(set.Diagnostics) > 0 {
			t.Fatalf("diagnostics:\n%v", set.Diagnostics)
		}
		if ev := set.Event("shop.v1.Placed"); ev == nil || ev.Pos.File != main {
			t.Fatalf("event Placed = %+v, want it positioned in %s", ev, main)
		}
	}
}

// TestLoadManyImports: a file importing 64 files on disk loads again and
// again. protocompile calls the loader's resolver and error reporter from
// its parallel goroutines; the loader's maps once crashed the process
// ("concurrent map read and map write") in about a third of runs, and
// `go test -race` reports any unguarded access on the first load (#43).
func TestLoadManyImports(t *testing.T) {
	t.Parallel()
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprintf("broken=%v", broken), func(t *testing.T) {
			t.Parallel()
			loadManyImports(t, 20, broken)
		})
	}
}
