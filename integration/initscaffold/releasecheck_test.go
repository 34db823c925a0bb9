package initscaffold

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReleaseCheckCounts runs scripts/release-check.sh's steps that need
// no built dist/ (checksums and paths) on a throwaway release directory:
// each check is counted, a failed one makes the summary and the exit code
// say so. (`make release-check` runs every step on the real dist/.)
func TestReleaseCheckCounts(t *testing.T) {
	e := setup(t)
	dist := t.TempDir()
	// Each directory of a release has a file and its SHA256SUMS.
	for _, d := range []string{"bin", "goproxy", "python", "maven"} {
		if err := os.MkdirAll(filepath.Join(dist, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dist, d, "tool"), []byte("an artifact of "+d+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		sum := exec.Command("sha256sum", "tool")
		sum.Dir = filepath.Join(dist, d)
		sums, err := sum.Output()
		if err != nil {
			t.Fatalf("sha256sum: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dist, d, "SHA256SUMS"), sums, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(e.root, "scripts", "release-check.sh")
	mc := filepath.Join(e.bin, "msgcontract")
	releaseCheck := func(args ...string) (string, int) {
		cmd := exec.Command("bash", append([]string{script}, args...)...)
		// Its temporary directory, kept when a check fails, goes with the test's.
		cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}

	out, code := releaseCheck("--only", "checksums,paths", "--msgcontract", mc, dist)
	if code != 0 || !strings.Contains(out, "release-check: checksums: dist/bin/SHA256SUMS: ok") ||
		!strings.Contains(out, "release-check: paths: no scaffold names the checkout") ||
		!strings.HasSuffix(out, "release-check: 5 passed, 0 failed\n") {
		t.Fatalf("a good release: exit %d\n%s", code, out)
	}

	if err := os.WriteFile(filepath.Join(dist, "bin", "tool"), []byte("tampered\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, code = releaseCheck("--only", "checksums", dist)
	if code != 1 || !strings.Contains(out, "release-check: checksums: dist/bin/SHA256SUMS: FAILED") ||
		!strings.Contains(out, "release-check: 3 passed, 1 failed\n") || !strings.Contains(out, "release-check: kept ") {
		t.Fatalf("a tampered binary: exit %d, want 1 and a failed check\n%s", code, out)
	}

	for _, bad := range [][]string{{"--only", "nosuchstep", dist}, {filepath.Join(dist, "missing")}} {
		if out, code := releaseCheck(bad...); code != 2 {
			t.Errorf("release-check %v: exit %d, want 2\n%s", bad, code, out)
		}
	}
}
