// Command protoc-gen-msgcontract is msgcontract's protoc and buf plugin:
//
//	protoc -I proto -I contracts --go_out=gen --msgcontract_out=lang=go:gen proto/shop/payment/v1/payment.proto
//
// protoc needs msgcontract/v1/options.proto on its include path (-I
// contracts above, this repository's copy); msgcontract generate has it
// built in. With buf, keep options.proto in the module or a dependency
// and name the plugin in buf.gen.yaml ("local: protoc-gen-msgcontract",
// "opt: [lang=go, paths=source_relative]").
//
// It writes exactly what `msgcontract generate` writes for the same files
// and parameters (lang=go|java|python, paths=import|source_relative,
// module=PREFIX, M<file>=<go import path>). lang=go+java+python generates
// the three in one invocation into DIR/go, DIR/java and DIR/python
// (go_dir=, java_dir=, python_dir= rename them). The generator lives in
// codegen/plugin; the version in file headers is internal/buildinfo's, as the CLI's is, so
// one -ldflags "-X github.com/msgcontract/msgcontract/internal/buildinfo.Version=..."
// stamps both binaries alike.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/msgcontract/msgcontract/codegen/plugin"
	"github.com/msgcontract/msgcontract/internal/buildinfo"
	"github.com/msgcontract/msgcontract/internal/gcpolicy"
	"github.com/msgcontract/msgcontract/internal/profile"
)

func main() {
	if len(os.Args) > 1 {
		os.Exit(command(os.Args[1:], os.Stdout, os.Stderr))
	}
	stopProfile := profile.Start()
	err := run(os.Stdin, os.Stdout)
	stopProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "protoc-gen-msgcontract:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	// Room for a request of a few hundred files: io.ReadAll would grow
	// its buffer from 512 bytes, copying the request a dozen times.
	buf := bytes.NewBuffer(make([]byte, 0, 1<<20))
	if _, err := buf.ReadFrom(in); err != nil {
		return err
	}
	raw := buf.Bytes()
	gcpolicy.Request(len(raw))
	return plugin.Answer(raw, buildinfo.Version, out)
}

// help is what --help prints: the parameters and how protoc and buf pass
// them.
const help = `protoc-gen-msgcontract is msgcontract's protoc and buf plugin. It writes
exactly what "msgcontract generate" writes for the same files and parameters.
protoc or buf runs it; it reads their request on standard input.

Usage:
  protoc -I proto -I contracts --msgcontract_out=PARAMS:DIR FILE.proto...
  buf generate    (with the plugin in buf.gen.yaml, PARAMS under opt:)

  contracts/ is a folder holding msgcontract/v1/options.proto, which protoc
  needs on its include path (msgcontract generate has it built in).

Parameters (comma-separated, KEY=VALUE):
  lang=go|java|python    the language to generate (default go); several
                         joined by + (lang=go+java+python) are generated in
                         one run into DIR/go, DIR/java and DIR/python
  go_dir=, java_dir=, python_dir=
                         with several languages: each one's folder in DIR
  paths=import|source_relative
                         where Go files go, as protoc-gen-go's paths=
  module=PREFIX          strip this Go import-path prefix, as protoc-gen-go's
  M<file>=<import path>  a Go import path for a .proto, as protoc-gen-go's

Examples:
  protoc -I proto -I contracts --go_out=gen --msgcontract_out=lang=go:gen \
      proto/shop/payment/v1/payment.proto
  protoc -I proto -I contracts --go_out=gen/go --java_out=gen/java --python_out=gen/python \
      --msgcontract_out=lang=go+java+python:gen proto/shop/payment/v1/payment.proto

  # buf.gen.yaml: one entry for the three languages
  - local: protoc-gen-msgcontract
    out: gen
    opt: [lang=go+java+python, paths=source_relative]

A contract error fails the protoc or buf run with the file:line:col of the
problem; run "msgcontract lint" on the files for every finding at once.

Flags:
  -h, --help      this text
      --version   the version, as written into generated files' headers
`

// command answers a command line (the plugin takes none from protoc):
// --version and --help, exit 0; anything else is a mistake, exit 2.
func command(args []string, stdout, stderr io.Writer) int {
	switch args[0] {
	case "--version", "-version":
		fmt.Fprintln(stdout, buildinfo.Line("protoc-gen-msgcontract"))
		return 0
	case "--help", "-help", "-h":
		fmt.Fprint(stdout, help)
		return 0
	}
	fmt.Fprintf(stderr, "protoc-gen-msgcontract %s: unknown argument %q: it is a protoc plugin, run through protoc --msgcontract_out=lang=go:DIR (or lang=go+java+python:DIR for the three into DIR/go, DIR/java, DIR/python) or buf generate, not directly; --help says more\n", buildinfo.Version, args[0])
	return 2
}
