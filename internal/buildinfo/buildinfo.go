// Package buildinfo holds what a build stamps into msgcontract's binaries.
// It imports nothing but runtime/debug, so protoc-gen-msgcontract can print
// the version the CLI prints without linking the CLI (and with it the
// registry server and the Kafka, NATS and SQL clients of dlq): a plugin
// starts once per protoc invocation, in every build.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Version is the release, set at build time for both binaries with
// -ldflags "-X github.com/msgcontract/msgcontract/internal/buildinfo.Version=v1.2.3";
// generated files name it in their header. A binary built by
// `go install github.com/msgcontract/msgcontract/cmd/msgcontract@v1.2.3`
// (no -ldflags) takes the module version Go recorded; any other build is
// "dev".
var Version = "dev"

func init() {
	if Version != "dev" {
		return
	}
	if bi, ok := debug.ReadBuildInfo(); ok && isRelease(bi.Main.Version) {
		Version = strings.TrimPrefix(bi.Main.Version, "v")
	}
}

// isRelease reports whether v is vX.Y.Z: not "(devel)", not a
// pseudo-version or a +dirty build of a checkout.
func isRelease(v string) bool {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if !strings.HasPrefix(v, "v") || len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}
