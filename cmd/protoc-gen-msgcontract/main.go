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
		switch os.Args[1] {
		case "--version", "-version":
			fmt.Println("protoc-gen-msgcontract", buildinfo.Version)
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "protoc-gen-msgcontract %s is a protoc plugin: run it through protoc --msgcontract_out=lang=go:DIR (or lang=go+java+python:DIR for the three into DIR/go, DIR/java, DIR/python) or buf generate, not directly\n", buildinfo.Version)
		os.Exit(2)
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
