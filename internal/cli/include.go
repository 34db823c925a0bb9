package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract"
	"github.com/msgcontract/msgcontract/contracts"
)

func newIncludeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "include",
		Short: "Print a directory holding msgcontract/v1/*.proto, for protoc -I and buf",
		Long: `include writes msgcontract's own contracts (msgcontract/v1/options.proto and
msgcontract/v1/envelope.proto), which this binary carries, into the user's
cache directory and prints that directory, so that other tools resolve
import "msgcontract/v1/options.proto" against exactly the options this
binary understands:

  <user cache>/msgcontract/<version>/include

(<user cache> is $XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on
macOS, %LocalAppData% on Windows). Every call checks the files and rewrites
any that is missing or differs, each atomically, so a second call costs a
stat and two reads and an edited or truncated file is repaired.

msgcontract generate and lint do not need it: they have the files built in.

Exits 0 and prints the directory; exits 2 when the cache directory cannot
be found or written (set XDG_CACHE_HOME, or HOME, to a writable directory).`,
		Example: `  protoc -I proto -I "$(msgcontract include)" --go_out=gen proto/shop/v1/shop.proto
  # buf: link the directory into the workspace and make it a module of buf.yaml (v2),
  #   modules: [{path: proto}, {path: .msgcontract/include}]
  # with buf.gen.yaml's input only proto/ (msgcontract init writes both)
  mkdir -p .msgcontract && ln -sfn "$(msgcontract include)" .msgcontract/include`,
		Args: ExactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cache, err := os.UserCacheDir()
			if err != nil {
				return UsageErr(fmt.Errorf("no user cache directory: %w; set XDG_CACHE_HOME or HOME", err))
			}
			version, dev := releaseVersion()
			if dev {
				version = "dev"
			}
			dir, err := WriteInclude(cache, version)
			if err != nil {
				return UsageErr(err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), dir)
			return nil
		},
	}
	return cmd
}

// IncludeFiles are the import paths include writes.
var IncludeFiles = []string{contracts.OptionsPath, contracts.EnvelopePath}

// WriteInclude makes <cacheRoot>/msgcontract/<version>/include hold the
// embedded msgcontract/v1/*.proto, rewriting (atomically: a temporary file
// in the same directory, then a rename) every file that is missing or
// differs, and returns that directory. A "dev" build writes to
// "<msgcontract.Version>-dev", which a later dev build may rewrite.
func WriteInclude(cacheRoot, version string) (string, error) {
	if version == "" || version == "dev" {
		version = msgcontract.Version + "-dev"
	}
	dir := filepath.Join(cacheRoot, "msgcontract", version, "include")
	for _, name := range IncludeFiles {
		want, err := contracts.Source(name)
		if err != nil {
			return "", fmt.Errorf("embedded %s: %w", name, err)
		}
		path := filepath.Join(dir, filepath.FromSlash(name))
		if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, want) {
			continue
		}
		if err := writeAtomic(path, want); err != nil {
			return "", fmt.Errorf("writing %s: %w; make the cache writable or set XDG_CACHE_HOME", path, err)
		}
	}
	return dir, nil
}

func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
