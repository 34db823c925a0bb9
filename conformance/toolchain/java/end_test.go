package java_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/conformance/toolchain/java"
)

// TestEnds resolves each end of PROTOBUF's Java range and checks that it is
// what it says: protoc Y.Z of com.google.protobuf:protoc 4.Y.Z, and that
// release's protobuf-java and protobuf-java-util, no other, on the classpath.
func TestEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("resolves the Java toolchain with Maven; skipped with -short")
	}
	if java.Newest.Version() != java.ProtocVersion || java.Oldest.Version() != java.OldestProtocVersion {
		t.Fatalf("Newest is %s, Oldest %s", java.Newest.Version(), java.Oldest.Version())
	}
	for _, end := range []java.End{java.Newest, java.Oldest} {
		t.Run(end.String(), func(t *testing.T) {
			ctx := context.Background()
			tools, err := java.ResolveEnd(ctx, end)
			if err != nil {
				t.Fatal(err)
			}
			defer tools.Close()
			if tools.End != end {
				t.Errorf("End is %v", tools.End)
			}
			v := end.Version()
			out, err := exec.CommandContext(ctx, tools.Protoc, "--version").CombinedOutput()
			if err != nil {
				t.Fatalf("protoc --version: %v\n%s", err, out)
			}
			if got, want := strings.TrimSpace(string(out)), "libprotoc "+strings.TrimPrefix(v, "4."); got != want {
				t.Errorf("protoc --version says %q, want %q", got, want)
			}
			var protobuf []string
			for _, jar := range tools.Classpath {
				if base := filepath.Base(jar); strings.HasPrefix(base, "protobuf-java") {
					protobuf = append(protobuf, base)
				}
			}
			if want := []string{"protobuf-java-" + v + ".jar", "protobuf-java-util-" + v + ".jar"}; strings.Join(protobuf, " ") != strings.Join(want, " ") {
				t.Errorf("the classpath's protobuf jars are %v, want %v", protobuf, want)
			}
		})
	}
}
