// Command conformance runs msgcontract's conformance vectors against the
// Go, Java and Python code it generates and prints, per language, a closing
// line "conformance-<lang>: N passed, M failed". It exits 1 when any case
// failed.
//
//	go run ./conformance/cmd/conformance [-lang go,java,python,python-async,java-oldest,...] [-jobs N] [-keep] [DIR]
//
// -jobs (2) runs that many languages side by side: on two cores the JVM
// and Python executors wait on their toolchains often enough to overlap.
//
// The -oldest executors build and run the generated code on the oldest
// supported protobuf of their language (the file PROTOBUF); the others on
// the newest.
//
// DIR defaults to testdata/conformance.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/conformance"
	"github.com/msgcontract/msgcontract/conformance/golang"
	"github.com/msgcontract/msgcontract/conformance/java"
	"github.com/msgcontract/msgcontract/conformance/python"
	javabuild "github.com/msgcontract/msgcontract/conformance/toolchain/java"
	pybuild "github.com/msgcontract/msgcontract/conformance/toolchain/python"
)

func main() {
	langs := flag.String("lang", "go,java,python,python-async,java-oldest,python-oldest,python-async-oldest", "comma-separated languages to run")
	keep := flag.Bool("keep", false, "keep the generated code and print where it is")
	jobs := flag.Int("jobs", 2, "languages run side by side (each runs its vector files in turn); 1 runs them one after the other")
	flag.Parse()
	dir := "testdata/conformance"
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, dir, strings.Split(*langs, ","), *keep, *jobs))
}

func run(ctx context.Context, dir string, langs []string, keep bool, jobs int) int {
	files, err := conformance.LoadDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 2
	}
	if len(files) == 0 {
		fmt.Fprintf(os.Stderr, "conformance: no vector files (*.json) under %s\n", dir)
		return 2
	}
	javaTools := &javabuild.Shared{}
	defer javaTools.Close()
	// The oldest supported protobuf-java (PROTOBUF), resolved only if asked for.
	javaOldest := &javabuild.Shared{End: javabuild.Oldest}
	defer javaOldest.Close()
	// Each language's executor.
	executors := map[string]func(context.Context, *conformance.VectorFile, string) ([]conformance.Result, error){
		"go":                  golang.Run,
		"java":                java.Executor{Tools: javaTools}.Run,
		"java-oldest":         java.Executor{Tools: javaOldest}.Run,
		"python-oldest":       python.Executor{End: pybuild.Oldest}.Run,
		"python-async-oldest": python.Executor{End: pybuild.Oldest, Async: true}.Run,
		"python":              python.Run,
		// python-async: the same vectors through the asyncio consumer
		// (msgcontract_runtime.aio), which must answer as the synchronous one.
		"python-async": python.RunAsync,
	}
	// The executors at the oldest end of the supported protobuf range: they
	// do not run vector files of editions their protobuf predates.
	oldest := map[string]struct {
		maxEdition descriptorpb.Edition
		toolchain  string
	}{
		"java-oldest":         {javabuild.Oldest.MaxEdition(), javabuild.Oldest.Toolchain()},
		"python-oldest":       {pybuild.Oldest.MaxEdition(), pybuild.Oldest.Toolchain()},
		"python-async-oldest": {pybuild.Oldest.MaxEdition(), pybuild.Oldest.Toolchain()},
	}
	var exs []conformance.Executor
	for _, l := range langs {
		run, ok := executors[l]
		if !ok {
			fmt.Fprintf(os.Stderr, "conformance: unknown language %q; choose from go, java, python, python-async, java-oldest, python-oldest, python-async-oldest\n", l)
			return 2
		}
		ex := conformance.Executor{Lang: l, Run: run}
		if end, ok := oldest[l]; ok {
			ex.MaxEdition, ex.Toolchain = end.maxEdition, end.toolchain
		}
		exs = append(exs, ex)
	}
	work, err := os.MkdirTemp("", "msgcontract-conformance-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		return 2
	}
	if keep {
		fmt.Fprintln(os.Stderr, "conformance: generated code kept in", work)
	} else {
		defer os.RemoveAll(work)
	}
	code := 0
	for _, s := range conformance.RunJobs(ctx, os.Stdout, files, exs, work, jobs) {
		if s.Failed > 0 {
			code = 1
		}
	}
	return code
}
