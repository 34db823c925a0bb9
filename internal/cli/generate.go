package cli

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/msgcontract/msgcontract/third_party/protocompile/linker"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/golang"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/internal/buildinfo"
	"github.com/msgcontract/msgcontract/internal/gcpolicy"
)

func newGenerateCmd() *cobra.Command {
	var (
		pf    ProtoFlags
		out   string
		p     emit.Params
		quiet bool
		dirs  = map[string]*string{} // --go-dir, --java-dir, --python-dir
		goOpt []string
	)
	cmd := &cobra.Command{
		Use:   "generate --lang go|java|python|go+java+python --out DIR [-I DIR]... FILE...",
		Short: "Generate Go, Java and Python producer and consumer code",
		Long: `generate compiles the contracts (no protoc needed) and writes, for every
file with events or state machines, the code that sits beside the
language's protobuf classes: biz_key rendering, each event's contract as
data (topic, event type, retry policy, error ranges), producer functions
that build and publish envelopes or write them to the outbox, typed
consumer handlers and their registration, and CanTransit for every state
machine. It writes exactly what protoc-gen-msgcontract writes for the same
files and parameters.

Go output goes beside protoc-gen-go's: by default under the go_package
import path inside --out; --paths source_relative puts it next to the
.proto's path instead, and --module strips a Go module prefix, as
protoc-gen-go's paths= and module= do. Nothing is written outside --out.

--go-opt M<file>=<import path> gives a .proto the Go import path (and,
after a ";", the package name) its go_package would, overriding it, as
protoc-gen-go's M parameter (protoc --go_opt=M...) does; repeat the flag
or join mappings by commas. A file with Go output, and every file it
imports, needs an import path one way or the other; a file without
events or state machines needs none (with --with-pb, whose .pb.go files
cover every file, every file does).

--lang may name several languages joined by + (--lang go+java+python):
the files are compiled and linted once, and each language's files go into
a folder of --out named after it (DIR/go, DIR/java, DIR/python), as
protoc-gen-msgcontract's lang=go+java+python lays them out; --go-dir,
--java-dir and --python-dir name other folders (relative to --out, such
as --python-dir gen/py), as the plugin's go_dir= ... do. --paths,
--module and --go-opt then apply to Go alone.

--with-pb (Go only) also writes protoc-gen-go's .pb.go files for the same
files, so a Go service needs neither protoc nor protoc-gen-go.

Contracts with lint errors are refused: the errors are printed (as
msgcontract lint prints them) and nothing is written. Each written file is
printed to stdout, relative to --out, one a line (for scripts); then one
line to stderr, such as "ok: generated 12 files for go, java (3
contracts)". -q prints neither.

Exit status: 0 written; 1 lint errors; 2 usage errors, files that do not
compile, or generation errors (such as a go_package that escapes --out).`,
		Example: `  msgcontract generate --lang go --out gen -I examples/proto examples/proto/shop/payment/v1/payment.proto
  msgcontract generate --lang go --out . --module github.com/acme/shop \
      -I proto proto/shop/payment/v1/payment.proto
  msgcontract generate --lang go --with-pb --out gen --paths source_relative -I proto proto/shop/*/v1/*.proto
  msgcontract generate --lang go --out gen --go-opt Mshop/v1/order.proto=example.com/shop/v1 -I proto proto/shop/v1/order.proto
  msgcontract generate --lang go+java+python --with-pb --out gen --paths source_relative -I proto proto/shop/*/v1/*.proto
  msgcontract generate --lang java+python --java-dir src/main/java --python-dir py --out . -I proto proto/shop/*/v1/*.proto`,
		Args: MinArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" || p.Lang == "" {
				return UsageErr(errors.New("--lang and --out are required; see --help"))
			}
			switch p.Paths {
			case "", "import", "source_relative":
			default:
				return UsageErr(fmt.Errorf("--paths %q: want import or source_relative", p.Paths))
			}
			targets, err := languageTargets(cmd, p.Lang, dirs)
			if err != nil {
				return UsageErr(err)
			}
			if p.GoImportPaths, err = goImportPaths(goOpt); err != nil {
				return UsageErr(err)
			}
			if len(goOpt) > 0 && !slices.ContainsFunc(targets, func(t generate.Target) bool { return t.Lang == "go" }) {
				return UsageErr(fmt.Errorf("--go-opt is given but --lang %s does not name go", p.Lang))
			}
			view := generate.ViewParams(p, targets)
			if p.WithPB && view.Lang != "go" {
				return UsageErr(fmt.Errorf("--with-pb writes Go protobuf code: use it with --lang go (or a --lang naming go), not %q", p.Lang))
			}
			// A short batch run: few collections while the heap is small,
			// a limit following the live heap once it is big.
			_ = gcpolicy.Batch()
			set, err := pf.compile(cmd.Context(), args, false)
			if err != nil {
				return loadFailed(cmd, err)
			}
			dropped := len(set.Diagnostics) == 0
			if dropped {
				// The model is built and clean, so nothing asks for a
				// source position unless the emitters' checks in Lint
				// find a problem: protocompile's syntax trees (about a
				// fifth of the heap) go before the Go view is built.
				dropASTs(set)
			}
			// Java and Python read comments from the descriptors' source
			// info: it may go only when Go is all a --with-pb run writes.
			withPB := dropped && view.WithPB && len(targets) == 1
			if withPB {
				// The Go emitter takes comments from the view, and no
				// position is asked for unless Lint finds a problem
				// (then the files are compiled again): the descriptors'
				// locations go before the view is built.
				eachResult(set, dropLocations)
			}
			// One protogen view for lint's Go checks, the Go emitter and
			// protoc-gen-go (--with-pb), built before Lint asks for it.
			generate.ShareGoView(set, view)
			if withPB {
				// The view has read the comments: the protos' source
				// info, which protoc-gen-go clones with each file's proto
				// only to drop it, goes too.
				eachResult(set, func(r linker.Result) { r.FileDescriptorProto().SourceCodeInfo = nil })
			}
			generate.Lint(set)
			if len(set.Diagnostics) > 0 && dropped {
				// Positions come from the syntax trees: compile again
				// to report the problems where they are.
				if set, err = pf.compile(cmd.Context(), args, false); err != nil {
					return loadFailed(cmd, err)
				}
				generate.Lint(set)
			}
			if n := len(set.Diagnostics); n > 0 {
				for _, d := range set.Diagnostics {
					fmt.Fprintln(cmd.ErrOrStderr(), d)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "msgcontract generate: %d lint problem%s; nothing written\n", n, Plural(n))
				return Findings()
			}
			p.Version = buildinfo.Version
			// Files are written as they are rendered, so few are held in
			// memory at once; their names are printed sorted at the end.
			var (
				mu       sync.Mutex
				written  []string
				writeErr error
				w        = &emit.Writer{Dir: out}
			)
			err = generate.EachTarget(set, p, targets, func(f emit.File) error {
				err := w.Write(f) // from several goroutines at once
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					writeErr = err
					return err
				}
				written = append(written, f.Name)
				return nil
			})
			if writeErr != nil {
				return &exitError{code: ExitUsage, err: writeErr}
			}
			if missing := (*golang.ImportPathError)(nil); errors.As(err, &missing) {
				return UsageErr(fmt.Errorf("%w; add 'option go_package = \"<import path>\";' to %s or pass --go-opt M%s=<import path>",
					err, missing.File, missing.File))
			}
			if err != nil {
				return UsageErr(err)
			}
			if len(written) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "msgcontract generate: no events or state machines in these files; nothing written")
				return nil
			}
			if !quiet {
				sort.Strings(written)
				for _, name := range written {
					fmt.Fprintln(cmd.OutOrStdout(), name)
				}
				contracts := 0
				for _, f := range set.Files {
					if f.HasContract() {
						contracts++
					}
				}
				langs := make([]string, len(targets))
				for i, t := range targets {
					langs[i] = t.Lang
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "ok: generated %s for %s (%s)\n",
					Count(len(written), "file"), strings.Join(langs, ", "), Count(contracts, "contract"))
			}
			return nil
		},
	}
	pf.Register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&p.Lang, "lang", "", "language to generate: "+strings.Join(generate.Langs, ", ")+", or several joined by + (go+java+python) into --out/<lang>")
	fl.StringVar(&out, "out", "", "output directory; created when missing")
	fl.StringVar(&p.Paths, "paths", "", `where files go: "import" (default: by go_package) or "source_relative" (by the .proto's path)`)
	fl.StringVar(&p.Module, "module", "", "Go only: strip this module path prefix from output paths, like protoc-gen-go's module=")
	fl.BoolVar(&p.WithPB, "with-pb", false, "Go only: also write protoc-gen-go's .pb.go files (no protoc needed)")
	fl.StringArrayVar(&goOpt, "go-opt", nil, "Go only: M<file>=<import path>, the Go import path of a .proto, like protoc-gen-go's M parameter (repeatable; or several joined by commas)")
	fl.BoolVarP(&quiet, "quiet", "q", false, "print nothing on success: neither the written files nor the \"ok:\" line")
	for _, l := range generate.Langs {
		dirs[l] = fl.String(dirFlag(l), "", "with several languages in --lang: the folder of "+l+"'s files inside --out (default "+l+")")
	}
	return cmd
}

// goImportPaths reads --go-opt: protoc-gen-go's M<file>=<import path>
// mappings, one a flag or several joined by commas, as protoc's --go_opt
// takes them. protoc-gen-go's other parameters have flags of their own.
func goImportPaths(opts []string) (map[string]string, error) {
	if len(opts) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, opt := range opts {
		for kv := range strings.SplitSeq(opt, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch {
			case len(k) > 1 && k[0] == 'M' && v != "" && v[0] != ';':
				m[k[1:]] = v
			case k == "paths" || k == "module":
				return nil, fmt.Errorf("--go-opt %q: protoc-gen-go's %s= is --%s here", kv, k, k)
			default:
				return nil, fmt.Errorf("--go-opt %q: want M<file>=<import path>, such as Mshop/v1/order.proto=example.com/shop/v1 (or =example.com/shop/v1;shopv1 to name the package)", kv)
			}
		}
	}
	return m, nil
}

// dirFlag is the name of the flag naming lang's folder ("go-dir"), as
// generate.DirFlag spells it in errors.
func dirFlag(lang string) string {
	return strings.TrimSpace(strings.TrimPrefix(generate.DirFlag("--lang ", lang), "--"))
}

// languageTargets reads --lang and the folder flags given beside it. A
// folder flag for a language --lang does not name, or beside a single
// language (whose files go straight into --out), is a mistake, not
// something to ignore.
func languageTargets(cmd *cobra.Command, list string, dirs map[string]*string) ([]generate.Target, error) {
	set := map[string]string{}
	for _, l := range generate.Langs {
		if cmd.Flags().Changed(dirFlag(l)) {
			set[l] = *dirs[l]
		}
	}
	targets, err := generate.Targets(list, set, "--lang ")
	if err != nil {
		return nil, err
	}
	for _, l := range generate.Langs {
		if _, ok := set[l]; !ok {
			continue
		}
		switch {
		case !slices.ContainsFunc(targets, func(t generate.Target) bool { return t.Lang == l }):
			return nil, fmt.Errorf("--%s is given but --lang %s does not name %s", dirFlag(l), list, l)
		case len(targets) == 1:
			return nil, fmt.Errorf("--%s applies when --lang names several languages; with --lang %s alone the files go straight into --out", dirFlag(l), l)
		}
	}
	return targets, nil
}

// dropASTs lets go of protocompile's syntax trees. Positions asked for
// afterwards are empty.
func dropASTs(set *model.Set) {
	eachResult(set, func(r linker.Result) { r.RemoveAST() })
}

// eachResult calls f with every file of set protocompile compiled.
func eachResult(set *model.Set, f func(linker.Result)) {
	set.Registry.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if r, ok := fd.(linker.Result); ok {
			f(r)
		}
		return true
	})
}

// dropLocations lets go of r's locations (SourceLocations), protocompile's
// index of the source info in its proto (a tenth of the heap), which
// stays: PopulateSourceCodeInfo builds them again from a proto that has
// none for the moment. Positions asked for afterwards are the file's alone.
func dropLocations(r linker.Result) {
	fp := r.FileDescriptorProto()
	info := fp.SourceCodeInfo
	fp.SourceCodeInfo = nil
	r.PopulateSourceCodeInfo()
	fp.SourceCodeInfo = info
}
