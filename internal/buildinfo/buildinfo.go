// Package buildinfo holds what a build stamps into msgcontract's binaries.
// It imports nothing, so protoc-gen-msgcontract can print the version the
// CLI prints without linking the CLI (and with it the registry server and
// the Kafka, NATS and SQL clients of dlq): a plugin starts once per protoc
// invocation, in every build.
package buildinfo

// Version is the release, set at build time for both binaries with
// -ldflags "-X github.com/msgcontract/msgcontract/internal/buildinfo.Version=v1.2.3";
// generated files name it in their header.
var Version = "dev"
