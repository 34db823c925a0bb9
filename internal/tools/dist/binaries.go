package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

type target struct{ goos, goarch string }

var targets = []target{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

// commands are the binaries of a release. msgcontract-ops links
// go-sqlite3, which needs cgo (without it the registry, dlq --queue and
// dedup fail at run time): it is built for linux only, where a C compiler
// for the target is at hand.
var commands = []struct {
	name string
	cgo  bool
}{
	{"msgcontract", false},
	{"msgcontract-ops", true},
	{"protoc-gen-msgcontract", false},
}

// gccTriple names the Debian cross compiler for a Linux architecture.
var gccTriple = map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}

// binaries builds every command for every target from tree into out as
// <name>-<version>-<os>-<arch>, with cdx (cyclonedx-gomod; none if "")
// each one's SBOM <name>-<version>-<os>-<arch>.cdx.json, and writes
// out/SHA256SUMS of both. It returns how many binaries it wrote.
func binaries(tree, version, commit string, t time.Time, out, cdx string) (int, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return 0, err
	}
	ldflags := fmt.Sprintf("-s -w -X %s.Version=%s -X %s.Commit=%s", buildinfoPkg, version, buildinfoPkg, commit)
	var names []string
	for _, tg := range targets {
		for _, c := range commands {
			env := []string{"GOOS=" + tg.goos, "GOARCH=" + tg.goarch, "GOWORK=off", "GOFLAGS=-mod=readonly",
				"GOAMD64=v1", "GOARM64=v8.0", "CGO_CFLAGS=-O2 -g", "CGO_LDFLAGS=-O2 -g", "CGO_CPPFLAGS=", "CGO_CXXFLAGS=-O2 -g"}
			if c.cgo {
				if tg.goos != "linux" {
					continue // no C cross compiler for darwin: docs/release.md
				}
				cc, err := crossCC(tg.goarch)
				if err != nil {
					return 0, fmt.Errorf("%s for %s/%s: %w", c.name, tg.goos, tg.goarch, err)
				}
				env = append(env, "CGO_ENABLED=1", "CC="+cc)
			} else {
				env = append(env, "CGO_ENABLED=0")
			}
			name := fmt.Sprintf("%s-%s-%s-%s", c.name, version, tg.goos, tg.goarch)
			cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags,
				"-o", filepath.Join(absOut, name), "./cmd/"+c.name)
			cmd.Dir = tree
			cmd.Env = append(os.Environ(), env...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			if err := cmd.Run(); err != nil {
				return 0, fmt.Errorf("go build %s for %s/%s (%s): %v\n%s", c.name, tg.goos, tg.goarch, strings.Join(env, " "), err, stderr.Bytes())
			}
			if err := os.Chtimes(filepath.Join(absOut, name), t, t); err != nil {
				return 0, err
			}
			names = append(names, name)
		}
	}
	built := len(names)
	if cdx != "" {
		for _, n := range names[:built] {
			sbom, err := binarySBOM(cdx, filepath.Join(absOut, n), version, t)
			if err != nil {
				return 0, fmt.Errorf("the SBOM of %s: %w", n, err)
			}
			names = append(names, filepath.Base(sbom))
		}
	}
	sort.Strings(names)
	var sums bytes.Buffer
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(out, n))
		if err != nil {
			return 0, err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&sums, "%s  %s\n", hex.EncodeToString(sum[:]), n)
	}
	return built, writeFile(filepath.Join(out, "SHA256SUMS"), sums.Bytes(), t)
}

// crossCC is the C compiler for linux/goarch: gcc on a host of that
// architecture, Debian's cross gcc otherwise.
func crossCC(goarch string) (string, error) {
	if runtime.GOOS == "linux" && runtime.GOARCH == goarch {
		if _, err := exec.LookPath("gcc"); err == nil {
			return "gcc", nil
		}
	}
	triple, ok := gccTriple[goarch]
	if !ok {
		return "", fmt.Errorf("no C cross compiler known for linux/%s", goarch)
	}
	cc := triple + "-gcc"
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Errorf("cgo needs the C compiler %s, which is not installed: run bash scripts/setup.sh (it installs Debian's gcc-%s)", cc, triple)
	}
	return cc, nil
}
