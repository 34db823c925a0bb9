#!/usr/bin/env bash
# The Go part of make dist: dist/goproxy (the module proxy layout of the
# tool module and runtime-go's released modules, each with its CycloneDX SBOM
# <module>/@v/vX.Y.Z.cdx.json) and dist/bin (the three binaries for linux
# and darwin, amd64 and arm64, each with its SBOM <binary>.cdx.json, and
# SHA256SUMS of both), from the
# files of HEAD (internal/tools/dist; docs/release.md).
#   VERSION=X.Y.Z bash scripts/dist/go.sh                  (default: the VERSION file)
#   VERSION=X.Y.Z bash scripts/dist/go.sh --verify-reproducible
#       builds twice into temporary directories, the second time with an
#       empty Go build cache (so nothing is reused from the first), compares
#       every file byte for byte, then writes dist/ as usual.
# DIST_DIR (default dist) is where goproxy/ and bin/ go; DIST_ALLOW_DIRTY=1
# builds from HEAD even when the work tree has uncommitted changes.
set -euo pipefail
cd "$(dirname "$0")/../.."
version="${VERSION:-$(cat VERSION)}"
out="${DIST_DIR:-dist}"
tool="$(mktemp -d)"
trap 'chmod -R u+w "$tool" 2>/dev/null; rm -rf "$tool"' EXIT
# The tool is built from the work tree; what it releases is HEAD's files.
GOWORK=off go build -o "$tool/dist" ./internal/tools/dist
# cyclonedx-gomod (pinned in security/versions.env) writes each binary's and
# module's CycloneDX SBOM.
# shellcheck source=../../security/versions.env
source security/versions.env
cdx="$(bash scripts/go-tool.sh "$CYCLONEDX_GOMOD")"
# One commit for every run, even if HEAD moves meanwhile.
rev="$(git rev-parse --verify 'HEAD^{commit}')"
if [[ "${1:-}" == "--verify-reproducible" ]]; then
  "$tool/dist" -cyclonedx-gomod "$cdx" -rev "$rev" -version "$version" -out "$tool/a"
  GOCACHE="$tool/gocache" "$tool/dist" -cyclonedx-gomod "$cdx" -rev "$rev" -version "$version" -out "$tool/b"
  if ! diff -r "$tool/a" "$tool/b"; then
    echo "dist (Go): two builds of the same commit differ (above): the release is not reproducible" >&2
    exit 1
  fi
  echo "dist (Go): two builds are byte-identical ($(find "$tool/a" -type f | wc -l) files)"
elif [[ $# -gt 0 ]]; then
  echo "usage: VERSION=X.Y.Z bash scripts/dist/go.sh [--verify-reproducible]" >&2
  exit 2
fi
"$tool/dist" -cyclonedx-gomod "$cdx" -rev "$rev" -version "$version" -out "$out"
