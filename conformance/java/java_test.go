package java_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/msgcontract/msgcontract/conformance"
	"github.com/msgcontract/msgcontract/conformance/java"
	javabuild "github.com/msgcontract/msgcontract/conformance/toolchain/java"
)

// TestOldestEnd runs one vector file, the example payment contract (protoc's
// message classes, the envelope, the JSON payloads), through the executor
// at the oldest end of PROTOBUF's Java range: protoc 29.0's classes on
// protobuf-java 4.29.0 with the runtime jar built for the whole range. The
// conformance runner (make conformance) runs every file at the newest end.
func TestOldestEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves the Java toolchain with Maven; skipped with -short")
	}
	ctx := context.Background()
	files, err := conformance.LoadDir(filepath.Join("..", "..", "testdata", "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	var payment []*conformance.VectorFile
	for _, vf := range files {
		if filepath.Base(vf.Path) == "payment.json" {
			payment = append(payment, vf)
		}
	}
	if len(payment) != 1 {
		t.Fatalf("no payment.json among %d vector files", len(files))
	}
	tools := &javabuild.Shared{End: javabuild.Oldest}
	t.Cleanup(func() { tools.Close() })
	var out bytes.Buffer
	sums := conformance.Run(ctx, &out, payment, []conformance.Executor{{Lang: "java-oldest", Run: java.Executor{Tools: tools}.Run}}, t.TempDir())
	if s := sums[0]; s.Failed != 0 || s.Passed != len(payment[0].Cases) || s.Passed == 0 {
		t.Fatalf("%+v of %d cases\n%s", s, len(payment[0].Cases), out.String())
	}
	got, err := tools.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.End != javabuild.Oldest {
		t.Fatalf("the executor ran at the %v end", got.End)
	}
}
