package generate_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// TestEachWritesEachOutputOnce: with --with-pb, protoc-gen-go's .pb.go of
// plain files counts too: a/y.proto and b/y.proto of one go_package
// would share example.com/p/y.pb.go. The run is refused, naming both,
// before any file is handed over; apart, each file is written once.
func TestEachWritesEachOutputOnce(t *testing.T) {
	t.Parallel()
	plain := func(pkg string) string {
		return "syntax = \"proto3\";\npackage " + pkg + ";\noption go_package = \"example.com/p;p\";\nmessage M" + pkg + " { string id = 1; }\n"
	}
	contract := "syntax = \"proto3\";\npackage a;\nimport \"msgcontract/v1/options.proto\";\noption go_package = \"example.com/p;p\";\n" +
		"message E {\n  option (msgcontract.v1.event) = { topic: \"t\" event_type: \"E\" biz_key: \"{id}\" };\n  string id = 1;\n}\n"
	sources := map[string]string{"a/x.proto": contract, "a/y.proto": plain("a"), "b/y.proto": plain("b"), "b/z.proto": plain("b")}
	for _, tc := range []struct {
		files   []string
		wantErr string
	}{
		{[]string{"a/x.proto", "a/y.proto", "b/y.proto"}, "a/y.proto and b/y.proto both generate example.com/p/y.pb.go, so one would be written over the other"},
		{[]string{"a/x.proto", "a/y.proto", "b/z.proto"}, ""},
	} {
		set, err := model.Load(context.Background(), model.Config{Sources: sources}, tc.files...)
		if err != nil {
			t.Fatal(err)
		}
		generate.Lint(set)
		var (
			mu   sync.Mutex
			seen = map[string]int{}
		)
		err = generate.Each(set, emit.Params{Lang: "go", WithPB: true}, func(f emit.File) error {
			mu.Lock() // Each calls from several goroutines
			defer mu.Unlock()
			seen[f.Name]++
			return nil
		})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%v: %v", tc.files, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%v: error %v, want %q", tc.files, err, tc.wantErr)
		case tc.wantErr != "" && len(seen) > 0:
			t.Errorf("%v: refused, but handed over %v", tc.files, seen)
		}
		for name, n := range seen {
			if n != 1 {
				t.Errorf("%v: %s handed over %d times", tc.files, name, n)
			}
		}
	}
}
