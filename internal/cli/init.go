package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract"
	"github.com/msgcontract/msgcontract/internal/buildinfo"
	"github.com/msgcontract/msgcontract/internal/cli/initscaffold"
)

func newInitCmd() *cobra.Command {
	var (
		lang, name string
		force      bool
	)
	cmd := &cobra.Command{
		Use:   "init --lang go|java|python [--name NAME] [--force] DIR",
		Short: "Scaffold a service: a starter contract, its build and a producer + consumer that run",
		Long: `init writes a new service into DIR (created if missing):

  proto/NAME/v1/NAME.proto   a starter contract: one event with a biz_key,
                             error ranges and a retry policy
  buf.yaml, buf.gen.yaml     buf configuration that finds msgcontract's options
  Makefile                   generate (msgcontract generate), protoc (with
                             -I "$(msgcontract include)"), lint, run
  go.mod | pom.xml | pyproject.toml
                             requiring the msgcontract runtime of this
                             binary's release
  a producer + consumer      running one event through an embedded SQLite
                             store and printing what happened
  README.md                  the next three steps

NAME defaults to DIR's base name and must be a lower-case identifier
([a-z][a-z0-9_]*): it is the proto package (NAME.v1), the Go module
(example.com/NAME), the Java package (com.example.NAME) and the Python
package. A DIR holding anything is refused unless --force, which overwrites
the scaffold's files and leaves the others.

A development build (msgcontract --version prints "dev") requires the
runtimes of the VERSION it was built from and says so.

Exits 0 when written; 2 on a usage error, an invalid name, a non-empty DIR
or a DIR that cannot be written.`,
		Example: `  msgcontract init --lang go payments && cd payments && make run
  msgcontract init --lang python --name orders services/orders
  msgcontract init --lang java --force .`,
		Args: ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if lang == "" {
				return UsageErr(fmt.Errorf("--lang is required: one of %s; see --help", strings.Join(initscaffold.Langs, ", ")))
			}
			if name == "" {
				abs, err := filepath.Abs(dir)
				if err != nil {
					return UsageErr(err)
				}
				name = filepath.Base(abs)
				if err := initscaffold.ValidateName(name); err != nil {
					return UsageErr(fmt.Errorf("the name taken from DIR: %w", err))
				}
			}
			version, dev := releaseVersion()
			files, err := initscaffold.Render(initscaffold.Options{Lang: lang, Name: name, Version: version})
			if err != nil {
				return UsageErr(err)
			}
			if dev {
				fmt.Fprintf(cmd.ErrOrStderr(), "msgcontract init: a development build; the scaffold requires the runtimes of %s, the VERSION this binary was built from\n", version)
			}
			if err := initscaffold.Write(dir, files, force); err != nil {
				if errors.Is(err, initscaffold.ErrNotEmpty) {
					return UsageErr(err)
				}
				return UsageErr(fmt.Errorf("writing the scaffold: %w", err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "msgcontract init: wrote a %s service %q (runtime %s) into %s; next: cd %s and see README.md (make run)\n",
				lang, name, version, dir, dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&lang, "lang", "", "the service's language: go, java or python")
	cmd.Flags().StringVar(&name, "name", "", "the service's name (default: DIR's base name)")
	cmd.Flags().BoolVar(&force, "force", false, "write into a non-empty DIR, overwriting the scaffold's files")
	return cmd
}

// releaseVersion is the release this binary is, without a leading v
// (buildinfo.Version: stamped by the Makefile or recorded by go install),
// else (dev is true) the VERSION the binary was built from.
func releaseVersion() (version string, dev bool) {
	if v := strings.TrimPrefix(buildinfo.Version, "v"); v != "dev" && v != "" {
		return v, false
	}
	return msgcontract.Version, true
}
