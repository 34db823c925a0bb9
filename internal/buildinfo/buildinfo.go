// Package buildinfo holds what a build stamps into msgcontract's binaries.
// It imports only runtime/debug, so protoc-gen-msgcontract can print the
// version the CLI prints without linking the CLI (and with it the registry
// server and the Kafka, NATS and SQL clients of dlq): a plugin starts once
// per protoc invocation, in every build.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Version is the release, set at build time for every binary with
// -ldflags "-X github.com/msgcontract/msgcontract/internal/buildinfo.Version=1.2.3"
// (make build, make dist); generated files name it in their header. A
// binary built by `go install .../cmd/msgcontract@v1.2.3` has no such flag:
// it takes the version of its module from the build information instead.
// Otherwise (a plain `go build` in a checkout) it is "dev".
var Version = "dev"

// Commit is the git commit the binary was built from, set with
// -ldflags "-X github.com/msgcontract/msgcontract/internal/buildinfo.Commit=<sha>"
// by make dist; empty when unknown.
var Commit = ""

func init() {
	if Version != "dev" {
		return
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		Version = moduleVersion(bi.Main.Version, Version)
	}
}

// moduleVersion is v without its "v" when it is a release of the main
// module (go install pkg@vX.Y.Z), otherwise fallback: a build in a
// checkout says "(devel)" or a pseudo-version stamped from VCS.
func moduleVersion(v, fallback string) string {
	if !strings.HasPrefix(v, "v") || strings.Contains(v, "-") || strings.Contains(v, "+") {
		return fallback
	}
	return strings.TrimPrefix(v, "v")
}

// Line is what `name --version` prints: "msgcontract 1.2.3 (commit
// 0123abc)", or without the parenthesis when the commit is unknown. The
// version is the second field, so `msgcontract --version | cut -d' ' -f2`
// prints it.
func Line(name string) string {
	if Commit == "" {
		return name + " " + Version
	}
	short := Commit
	if len(short) > 12 {
		short = short[:12]
	}
	return name + " " + Version + " (commit " + short + ")"
}
