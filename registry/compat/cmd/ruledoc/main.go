// Command ruledoc prints docs/compat-rules.md, the table of compatibility
// rules with an example of each, from the rule table and the corpus. Run
// it from the repository root:
//
//	go run ./registry/compat/cmd/ruledoc > docs/compat-rules.md
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/msgcontract/msgcontract/registry/compat/internal/ruledoc"
)

func main() {
	root := flag.String("corpus", "testdata/compat", "the corpus directory")
	flag.Parse()
	if err := ruledoc.Render(os.Stdout, *root); err != nil {
		fmt.Fprintln(os.Stderr, "ruledoc:", err)
		os.Exit(2)
	}
}
