// Command testsummary reads `go test -json` on stdin and prints a line per
// package as it ends, the output of failed and skipped tests, and then the
// suite's summary line ("go: 412 passed, 0 skipped, 0 failed"). With -dir
// it also writes that line, and each line a test reported for another
// suite (java, python), to DIR/<suite>.txt for `make test`'s final report.
//
// It exits 1 when a test failed or a package did not build, and, when the
// environment has CI=true, when any test skipped: on CI a skip means a
// dependency the setup should have installed is missing.
//
//	go test -json ./... | go run ./internal/tools/testsummary -suite go -dir .build/test-summary
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/msgcontract/msgcontract/internal/testsummary"
)

func main() {
	suite := flag.String("suite", "", "the suite's name, first word of its summary line (required)")
	dir := flag.String("dir", "", "write DIR/<suite>.txt for each summary line")
	flag.Parse()
	if *suite == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go test -json ./... | testsummary -suite NAME [-dir DIR]")
		os.Exit(2)
	}
	res, err := testsummary.Summarize(*suite, os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	strict := os.Getenv("CI") == "true"
	for _, t := range res.Skipped {
		fmt.Printf("--- SKIP: %s (%s)\n%s", t.Name, t.Package, indent(t.Output))
	}
	lines := map[string]string{*suite: res.Line()}
	for s, l := range res.Reported {
		lines[s] = s + ": " + l
	}
	fmt.Println(res.Line())
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "testsummary:", err)
			os.Exit(2)
		}
		for s, l := range lines {
			if err := os.WriteFile(filepath.Join(*dir, s+".txt"), []byte(l+"\n"), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "testsummary:", err)
				os.Exit(2)
			}
		}
	}
	if !res.OK(strict) {
		if strict && len(res.Skipped) > 0 {
			fmt.Fprintf(os.Stderr, "testsummary: %d tests skipped under CI=true; install what they name (scripts/setup.sh) so that none skips\n", len(res.Skipped))
		}
		os.Exit(1)
	}
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" && !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "--- SKIP") {
			b.WriteString("    " + strings.TrimLeft(l, " "))
		}
	}
	return b.String()
}
