package plugin

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/pluginpb"

	"github.com/msgcontract/msgcontract/codegen/golang/pbgo"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// TestNarrowRawIsContractsOnly: narrowing the encoded request keeps
// exactly what narrowing the decoded one keeps (the contract files to
// generate and their imports, public ones included), and Run answers as
// Generate does.
func TestNarrowRawIsContractsOnly(t *testing.T) {
	t.Parallel()
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{
		"plain.proto":    "syntax = \"proto3\";\npackage p;\noption go_package = \"example.com/p\";\nmessage Plain { string id = 1; }\n",
		"reexport.proto": "syntax = \"proto3\";\npackage r;\nimport public \"msgcontract/v1/options.proto\";\noption go_package = \"example.com/r\";\n",
		"ev.proto": `syntax = "proto3";
package t;
import "reexport.proto";
import "plain.proto";
option go_package = "example.com/t";
// Paid is paid.
message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
  p.Plain plain = 2;
}`,
		"other.proto": "syntax = \"proto3\";\npackage o;\noption go_package = \"example.com/o\";\nmessage Other { string id = 1; }\n",
	}}, "plain.proto", "ev.proto", "other.proto")
	if err != nil {
		t.Fatal(err)
	}
	req := pbgo.Request("", set.Descriptors()...)
	raw, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	got := &pluginpb.CodeGeneratorRequest{}
	if err := proto.Unmarshal(narrowRaw(raw), got); err != nil {
		t.Fatal(err)
	}
	decoded := &pluginpb.CodeGeneratorRequest{} // options as a plugin decodes them
	if err := proto.Unmarshal(raw, decoded); err != nil {
		t.Fatal(err)
	}
	want := contractsOnly(decoded)
	if !proto.Equal(got, want) {
		t.Fatalf("narrowRaw kept %v of %d files, contractsOnly %v of %d", got.FileToGenerate, len(got.ProtoFile),
			want.FileToGenerate, len(want.ProtoFile))
	}
	if len(got.FileToGenerate) != 1 || got.FileToGenerate[0] != "ev.proto" || len(got.ProtoFile) >= len(req.ProtoFile) {
		t.Fatalf("kept %v to generate and %d of %d files, want ev.proto and fewer files", got.FileToGenerate, len(got.ProtoFile), len(req.ProtoFile))
	}
	var out bytes.Buffer
	if err := Run(bytes.NewReader(raw), &out, "v1"); err != nil {
		t.Fatal(err)
	}
	viaRun := &pluginpb.CodeGeneratorResponse{}
	if err := proto.Unmarshal(out.Bytes(), viaRun); err != nil {
		t.Fatal(err)
	}
	if direct := Generate(decoded, "v1"); !proto.Equal(viaRun, direct) || len(direct.File) != 1 {
		t.Fatalf("Run answered %d files (error %q), Generate %d (error %q), want the same one", len(viaRun.File),
			viaRun.GetError(), len(direct.File), direct.GetError())
	}
}
