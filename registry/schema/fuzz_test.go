package schema_test

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/msgcontract/msgcontract/registry/schema"
)

// FuzzParse feeds arbitrary schema strings, text or base64, to the path
// every registration takes. It must never panic, and every failure must be
// an *InvalidError (a 422 for the client), never an internal error.
func FuzzParse(f *testing.F) {
	ctx := context.Background()
	p, err := schema.Parse(ctx, "seed.proto", root, refs, fetcher(map[string]string{"money": dep}))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		root, dep, "", "syntax = \"proto3\";", "syntax = \"proto2\"; message M { required int32 a = 1; }",
		base64.StdEncoding.EncodeToString(p.Descriptor), "AAAA", "CgA=", "Cg1hLnByb3RvEgF4OgA=",
		"syntax = \"proto3\"; import \"msgcontract/v1/options.proto\"; message E { option (msgcontract.v1.event) = { biz_key: \"{\" }; }",
		"syntax = \"proto3\"; enum E { option allow_alias = true; A = 0; B = 0; }",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		_, err := schema.Parse(ctx, "f.proto", raw, nil, nil)
		var ie *schema.InvalidError
		if err != nil && !errors.As(err, &ie) {
			t.Fatalf("Parse(%q) failed with %T %v, want an InvalidError", raw, err, err)
		}
	})
}
