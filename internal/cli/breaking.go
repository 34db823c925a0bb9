package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/client"
	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/schema"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

func newBreakingCmd() *cobra.Command {
	var (
		pf                              ProtoFlags
		conn                            RegistryConn
		against, level, subject, format string
		code                            bool
	)
	cmd := &cobra.Command{
		Use:   "breaking --against PREV [--level LEVEL] [CURRENT]",
		Short: "Check a contract change for wire, JSON and contract breaks",
		Long: `breaking compares CURRENT with PREV and reports every change that would break
producers or consumers of the topic during a rolling deploy: on the wire
(a deleted field whose number is not reserved, a changed type, a lost
oneof member), in JSON with proto names (a renamed field or enum value),
and in the contract (a changed biz_key, topic or event type, an error code
moved between retryable and non-retryable, a removed state transition).
It is the registry's checker, run without a registry.

PREV is either
  - a directory: every .proto under it is compared with the files at the
    same paths (relative to the directory) under CURRENT (copies of
    msgcontract/v1/ and google/protobuf/ files are imports, not contracts:
    they are not compared), or
  - a registry URL (http:// or https://) with --subject: the subject's
    latest version, or every version for a _TRANSITIVE level, is compared
    with CURRENT, which is then the .proto file registered there.
CURRENT defaults to the current directory. Imports resolve relative to
each directory, then -I, then msgcontract's options and the well-known
types.

--level is one of NONE, BACKWARD (new consumers read old data), FORWARD
(old consumers read new data), FULL (both) and their _TRANSITIVE forms;
it defaults to FULL because producers and consumers upgrade independently.
Contract rules, removed reservations and RPC changes apply at every level
but NONE. --code also reports the CODE rules: changes no reader notices at
run time that break code generated from PREV (a field moved into a oneof,
presence, jstype, ctype, a deleted enum).

Prints one violation per line, FILE:LINE:COL: RULE_ID: message, on the file
where the element lives: CURRENT, or PREV for a message, enum or service
that was deleted. --format json prints one JSON document instead. A summary
count goes to stderr. Exit status: 0 compatible, 1 breaking, 2 usage errors
or an input that cannot be read or compiled. Every rule, with an example:
docs/compat-rules.md.`,
		Example: `  git worktree add /tmp/prev origin/main
  msgcontract breaking --against /tmp/prev/examples/proto examples/proto
  msgcontract breaking --against http://127.0.0.1:8081 --subject payment-value \
      -I examples/proto examples/proto/shop/payment/v1/payment.proto`,
		Args: ArgsBetween(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if against == "" {
				return UsageErr(errors.New("--against PREV is required: a directory of .proto files, or a registry URL with --subject"))
			}
			lvl, err := compat.ParseLevel(level)
			if err != nil {
				return UsageErr(err)
			}
			if format != "text" && format != "json" {
				return UsageErr(fmt.Errorf("--format %q: use text or json", format))
			}
			current := "."
			if len(args) == 1 {
				current = args[0]
			}
			ctx := cmd.Context()
			var history []*model.Set
			var next *model.Set
			if strings.HasPrefix(against, "http://") || strings.HasPrefix(against, "https://") {
				if subject == "" {
					return UsageErr(errors.New("--against a registry URL needs --subject"))
				}
				rc, err := conn.Client(against)
				if err != nil {
					return err
				}
				if history, err = registryHistory(ctx, rc, subject, lvl); err != nil {
					return UsageErr(err)
				}
				if next, err = pf.compile(ctx, []string{current}, true); err != nil {
					return loadFailed(cmd, err)
				}
			} else {
				prev, cur, err := loadDirs(cmd, pf, against, current)
				if err != nil {
					return err
				}
				history = []*model.Set{prev}
				next = cur
			}
			var opts []compat.Option
			if code {
				opts = append(opts, compat.WithSource())
			}
			vs := compat.CheckLevel(lvl, history, next, opts...)
			if err := printViolations(cmd.OutOrStdout(), format, lvl, vs); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "msgcontract breaking: %s\n", summary(lvl, vs))
			if len(vs) > 0 {
				return Findings()
			}
			return nil
		},
	}
	pf.Register(cmd)
	cmd.Flags().StringVar(&against, "against", "", "the previous contracts: a directory, or a registry URL with --subject")
	cmd.Flags().StringVar(&level, "level", string(compat.Full), "compatibility level: NONE, BACKWARD, FORWARD, FULL or a _TRANSITIVE form")
	cmd.Flags().StringVar(&subject, "subject", "", "registry subject, with --against URL")
	conn.Register(cmd)
	cmd.Flags().StringVar(&format, "format", "text", "output: text (FILE:LINE:COL: RULE_ID: message) or json")
	cmd.Flags().BoolVar(&code, "code", false, "also report CODE rules: changes that break only code generated from PREV")
	return cmd
}

// loadDirs compiles every .proto under prevDir and under curDir, each
// directory the first import path of its own files. The two compile at the
// same time: a check is mostly these two compiles. A directory that cannot
// be read or a file that does not compile exits 2, PREV's errors first.
func loadDirs(cmd *cobra.Command, pf ProtoFlags, prevDir, curDir string) (prev, cur *model.Set, err error) {
	prevFiles, err := protoFiles(prevDir)
	if err != nil {
		return nil, nil, UsageErr(err)
	}
	curFiles, err := protoFiles(curDir)
	if err != nil {
		return nil, nil, UsageErr(err)
	}
	compile := func(dir string, files []string) (*model.Set, error) {
		dirPF := ProtoFlags{importPaths: append([]string{dir}, pf.importPaths...)}
		return dirPF.compile(cmd.Context(), files, true)
	}
	var prevErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		prev, prevErr = compile(prevDir, prevFiles)
	}()
	cur, err = compile(curDir, curFiles)
	<-done
	if prevErr != nil {
		return nil, nil, loadFailed(cmd, prevErr)
	}
	if err != nil {
		return nil, nil, loadFailed(cmd, err)
	}
	return prev, cur, nil
}

// protoFiles lists the contracts under dir, sorted: its .proto files but
// those in hidden directories and copies of msgcontract's own and the
// well-known protos (kept on disk for protoc or buf), which declare no
// contracts; imports still resolve to them.
func protoFiles(dir string) ([]string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory; compare directories of .proto files (or use --against URL --subject S FILE)", dir)
	}
	var files []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".proto") {
			if rel, err := filepath.Rel(dir, path); err == nil && model.Builtin(filepath.ToSlash(rel)) {
				return nil
			}
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .proto files under %s", dir)
	}
	sort.Strings(files)
	return files, nil
}

// registryHistory fetches the versions of subject that level compares
// against, oldest first, compiled with their references.
func registryHistory(ctx context.Context, c *client.Client, subject string, level compat.Level) ([]*model.Set, error) {
	versions, err := c.Versions(ctx, subject)
	if err != nil {
		return nil, fmt.Errorf("subject %s: %w", subject, err)
	}
	if !level.Transitive() && len(versions) > 0 {
		versions = versions[len(versions)-1:]
	}
	fetch := func(ctx context.Context, s string, v int) (string, []subjectref.Reference, error) {
		return c.Version(ctx, s, v)
	}
	var out []*model.Set
	for _, v := range versions {
		text, refs, err := c.Version(ctx, subject, v)
		if err != nil {
			return nil, err
		}
		p, err := schema.Parse(ctx, subjectref.FileName(subject), text, refs, fetch)
		if err != nil {
			return nil, fmt.Errorf("subject %s version %d: %w", subject, v, err)
		}
		out = append(out, p.Set)
	}
	return out, nil
}
