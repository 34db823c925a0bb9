// Command dist writes the Go part of a release from one commit: the module
// proxy layout of the tool module and runtime-go's released modules
// (dist/goproxy) and the binaries (dist/bin). scripts/dist/go.sh runs it;
// docs/release.md says what it writes.
//
//	go run ./internal/tools/dist -version 0.3.0 -out dist
//
// It reads the files git ls-files lists at HEAD (git archive), never the
// work tree, and refuses a tree with changes unless DIST_ALLOW_DIRTY=1.
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
)

// goModules are the modules a release publishes, as directories of the
// repository. runtime-go/bench is not released.
var goModules = []string{
	".",
	"runtime-go",
	"runtime-go/transport/kafka",
	"runtime-go/transport/natsjs",
	"runtime-go/transport/rabbitmq",
	"runtime-go/transport/rocketmq",
	"runtime-go/sqldb/mysqldb",
	"runtime-go/dedup/redisfilter",
}

const buildinfoPkg = "github.com/msgcontract/msgcontract/internal/buildinfo"

func main() {
	version := flag.String("version", "", "the release, X.Y.Z (required; must be the VERSION file at HEAD)")
	out := flag.String("out", "dist", "the directory to write goproxy/ and bin/ into (both are replaced)")
	repo := flag.String("repo", ".", "the git repository to release from")
	rev := flag.String("rev", "HEAD", "the commit to release (its files, as git archive writes them)")
	skipBin := flag.Bool("skip-bin", false, "write dist/goproxy only")
	cdx := flag.String("cyclonedx-gomod", "", "the cyclonedx-gomod executable that writes each binary's and module's CycloneDX SBOM (<binary>.cdx.json, <module>/@v/vX.Y.Z.cdx.json); none written without it")
	flag.Parse()
	if err := run(*repo, *rev, *version, *out, goModules, *skipBin, *cdx); err != nil {
		fmt.Fprintf(os.Stderr, "dist (Go): %v\n", err)
		os.Exit(1)
	}
}

func run(repo, rev, version, out string, modules []string, skipBin bool, cdx string) error {
	if version == "" {
		return errors.New("-version X.Y.Z is required")
	}
	version = strings.TrimPrefix(version, "v")
	if dirty, err := git(repo, "status", "--porcelain", "--untracked-files=no"); err != nil {
		return err
	} else if len(dirty) > 0 && os.Getenv("DIST_ALLOW_DIRTY") != "1" {
		return fmt.Errorf("the work tree has changes that HEAD does not:\n%s\na release is built from one commit: commit or stash them (DIST_ALLOW_DIRTY=1 builds from HEAD anyway, ignoring them)", dirty)
	}
	sha, err := git(repo, "rev-parse", "--verify", rev+"^{commit}")
	if err != nil {
		return err
	}
	sha = bytes.TrimSpace(sha)
	ct, err := git(repo, "log", "-1", "--format=%ct", string(sha))
	if err != nil {
		return err
	}
	secs, err := strconv.ParseInt(string(bytes.TrimSpace(ct)), 10, 64)
	if err != nil {
		return fmt.Errorf("commit time of %s: %w", sha, err)
	}
	commitTime := time.Unix(secs, 0).UTC()

	tmp, err := os.MkdirTemp("", "msgcontract-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	archive, err := git(repo, "archive", "--format=tar", string(sha))
	if err != nil {
		return err
	}
	// Two copies: one becomes the released modules (go.mod and go.sum
	// rewritten), the binaries are built from the other as it is committed.
	modTree, binTree := filepath.Join(tmp, "mod"), filepath.Join(tmp, "src")
	for _, dir := range []string{modTree, binTree} {
		if err := untar(archive, dir, commitTime); err != nil {
			return err
		}
	}
	fileVersion, err := os.ReadFile(filepath.Join(modTree, "VERSION"))
	if err != nil {
		return err
	}
	if got := strings.TrimSpace(string(fileVersion)); got != version {
		return fmt.Errorf("VERSION at %s is %s, not %s: the modules embed it (version.go, runtime-go/event/version.go and the files go test . checks), so a release of %s must be committed with VERSION %s first", sha[:12], got, version, version, version)
	}

	proxyDir, binDir := filepath.Join(out, "goproxy"), filepath.Join(out, "bin")
	for _, d := range []string{proxyDir, binDir} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	if err := proxy(modTree, modules, "v"+version, commitTime, proxyDir); err != nil {
		return fmt.Errorf("writing %s: %w", proxyDir, err)
	}
	fmt.Printf("dist: %s: %d modules at v%s (commit %s)\n", proxyDir, len(modules), version, sha[:12])
	if cdx != "" {
		for _, dir := range modules {
			path, err := modulePath(filepath.Join(binTree, dir, "go.mod"))
			if err != nil {
				return err
			}
			if err := moduleSBOM(cdx, proxyDir, path, "v"+version, commitTime); err != nil {
				return fmt.Errorf("the SBOM of %s: %w", path, err)
			}
		}
		if err := sumsFile(proxyDir, commitTime); err != nil {
			return err
		}
		fmt.Printf("dist: %s: a CycloneDX SBOM per module (vX.Y.Z.cdx.json), SHA256SUMS of every file\n", proxyDir)
	}
	if skipBin {
		return nil
	}
	built, err := binaries(binTree, version, string(sha), commitTime, binDir, cdx)
	if err != nil {
		return fmt.Errorf("writing %s: %w", binDir, err)
	}
	if cdx != "" {
		fmt.Printf("dist: %s: %d binaries, their CycloneDX SBOMs (<binary>.cdx.json) and SHA256SUMS\n", binDir, built)
	} else {
		fmt.Printf("dist: %s: %d binaries and SHA256SUMS\n", binDir, built)
	}
	return nil
}

// modulePath reads the module line of a go.mod file.
func modulePath(gomod string) (string, error) {
	raw, err := os.ReadFile(gomod)
	if err != nil {
		return "", err
	}
	if p := modfile.ModulePath(raw); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%s has no module line", gomod)
}

// git runs git in repo and returns its standard output.
func git(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), repo, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// untar writes the regular files, directories and symbolic links of a tar
// archive under dir, every one dated t.
func untar(archive []byte, dir string, t time.Time) error {
	tr := tar.NewReader(bytes.NewReader(archive))
	var dirs []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading git archive: %w", err)
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, dir+string(filepath.Separator)) {
			return fmt.Errorf("git archive: %s is outside the tree", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				return err
			}
			dirs = append(dirs, name)
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			data, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := os.WriteFile(name, data, mode); err != nil {
				return err
			}
			if err := os.Chtimes(name, t, t); err != nil {
				return err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(h.Linkname, name); err != nil {
				return err
			}
		case tar.TypeXGlobalHeader:
			// git archive's commit id comment
		default:
			return fmt.Errorf("git archive: %s has a type this tool does not write (%c)", h.Name, h.Typeflag)
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Chtimes(dirs[i], t, t); err != nil {
			return err
		}
	}
	return nil
}
