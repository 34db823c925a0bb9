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
	"runtime/debug"

	"github.com/msgcontract/msgcontract/codegen/plugin"
	"github.com/msgcontract/msgcontract/internal/buildinfo"
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
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		setGC(len(raw))
	}
	resp, err := plugin.Answer(raw, buildinfo.Version)
	if err != nil {
		return err
	}
	_, err = out.Write(resp)
	return err
}

// Requests up to noGCRequest bytes are answered without collecting
// garbage below noGCLimit(size) of heap.
const noGCRequest = 4 << 20

// noGCLimit is the heap a request of size bytes may grow to before the
// collector runs: several times what answering it allocates in all (about
// 70 bytes per request byte on bench/codegen's corpus; its live heap is
// less than half of that), so in practice it never runs.
func noGCLimit(size int) int64 { return 64<<20 + 128*int64(size) }

// setGC sets the collector for one request of size bytes. A plugin run is
// a short batch that allocates much and keeps a good part of it, and a
// collection started on its heap costs more CPU (marking, on the other
// core too) than the memory it saves: with GOGC 400 the run's peak RSS was
// within 10% of never collecting, for 15% more CPU. So a request of usual
// size is answered with the collector off and a memory limit as the
// bound; a larger one with GOGC 400 as msgcontract generate. GOGC or
// GOMEMLIMIT in the environment wins: setGC is then not called.
func setGC(size int) {
	if size > noGCRequest {
		debug.SetGCPercent(400)
		return
	}
	debug.SetMemoryLimit(noGCLimit(size))
	debug.SetGCPercent(-1)
}
