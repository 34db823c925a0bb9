package golang_test

import (
	"context"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
)

const header = `syntax = "proto3";
package t.v1;
import "msgcontract/v1/options.proto";
`

const event = `
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
}
`

// fromSource compiles one in-memory file named t/v1/t.proto.
func fromSource(t *testing.T, src string) *model.Set {
	t.Helper()
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"t/v1/t.proto": src}}, "t/v1/t.proto")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Diagnostics) > 0 {
		t.Fatalf("lint errors:\n%v", set.Diagnostics)
	}
	return set
}

func TestGenerateNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		goPackage string
		params    emit.Params
		want      []string
		wantErr   string
	}{
		{name: "import path", goPackage: "example.com/shop/t/v1;tv1",
			want: []string{"example.com/shop/t/v1/t.msgcontract.go"}},
		{name: "source relative", goPackage: "example.com/shop/gen/t;tv1", params: emit.Params{Paths: "source_relative"},
			want: []string{"t/v1/t.msgcontract.go"}},
		{name: "module stripped", goPackage: "example.com/shop/gen/t;tv1", params: emit.Params{Module: "example.com/shop"},
			want: []string{"gen/t/t.msgcontract.go"}},
		{name: "module mismatch", goPackage: "example.com/other/t;tv1", params: emit.Params{Module: "example.com/shop"},
			wantErr: `does not match module prefix "example.com/shop"`},
		{name: "hostile go_package", goPackage: "../../x;x",
			wantErr: "escapes the output directory"},
		{name: "absolute go_package", goPackage: "/etc/x;x",
			wantErr: "escapes the output directory"},
		{name: "module with source_relative", goPackage: "example.com/shop/t;tv1", params: emit.Params{Paths: "source_relative", Module: "example.com/shop"},
			wantErr: "cannot use module= with paths=source_relative"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			set := fromSource(t, header+`option go_package = "`+tc.goPackage+`";`+event)
			tc.params.Lang = "go"
			files, err := generate.Run(set, tc.params)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				got = append(got, f.Name)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("files = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGenerateRefuses(t *testing.T) {
	t.Parallel()
	const gp = `option go_package = "example.com/t/v1;tv1";`
	tests := []struct {
		name, body, wantErr string
	}{
		{name: "message named like a generated symbol", wantErr: "GO_NAME_COLLISION: generated Go identifier PaidSpec for t.v1.Paid collides with the Go name of t.v1.PaidSpec", body: event + `
message PaidSpec { string x = 1; }`},
		{name: "no go_package", wantErr: "go_package", body: event},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := header + gp + tc.body
			if tc.name == "no go_package" {
				src = header + tc.body
			}
			_, err := generate.Run(fromSource(t, src), emit.Params{Lang: "go"})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestGenerateNothingWithoutEvents(t *testing.T) {
	t.Parallel()
	set := fromSource(t, header+`option go_package = "example.com/t/v1;tv1";
enum Plain { PLAIN_UNSPECIFIED = 0; }
message M { string id = 1; }`)
	files, err := generate.Run(set, emit.Params{Lang: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 0 {
		t.Fatalf("generated %d files for a file without events or state machines", len(files))
	}
}

// TestDeterministic: two runs give the same bytes.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	tc := goldenCases[1]
	a, err := generate.Run(load(t, tc.root, tc.files...), goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	b, err := generate.Run(load(t, tc.root, tc.files...), goldenParams)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || string(a[i].Content) != string(b[i].Content) {
			t.Fatalf("%s differs between runs", a[i].Name)
		}
	}
}

// TestBizKeyMethodAvoidsFields: a field or oneof named biz_key keeps its
// protoc-gen-go name and the generated method moves aside to BizKey_.
func TestBizKeyMethodAvoidsFields(t *testing.T) {
	t.Parallel()
	const gp = `option go_package = "example.com/t/v1;tv1";`
	for _, body := range []string{`
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
  string biz_key = 2;
}`, `
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
  oneof biz_key { string a = 2; int64 b = 3; }
}`} {
		files, err := generate.Run(fromSource(t, header+gp+body), emit.Params{Lang: "go"})
		if err != nil {
			t.Fatal(err)
		}
		if c := string(files[0].Content); !strings.Contains(c, "func (m *Paid) BizKey_() (string, error)") || !strings.Contains(c, "m.BizKey_()") {
			t.Fatalf("no BizKey_ method in\n%s", files[0].Content)
		}
	}
}
