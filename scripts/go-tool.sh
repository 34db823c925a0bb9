#!/usr/bin/env bash
# go-tool.sh PKG@VERSION: installs the Go command PKG at VERSION (pinned
# by the caller, e.g. from security/versions.env) into
# .build/tools/<name>@<version>/ unless it is there, and prints the path of
# the executable. Progress goes to stderr, so $(bash scripts/go-tool.sh ...)
# is the path alone.
set -euo pipefail
cd "$(dirname "$0")/.."
spec="${1:?usage: scripts/go-tool.sh PKG@VERSION}"
[[ "$spec" == *@v* ]] || { echo "go-tool: $spec names no version (PKG@vX.Y.Z)" >&2; exit 2; }
pkg="${spec%@*}" version="${spec##*@}" name="${pkg##*/}"
dir="$PWD/.build/tools/$name@$version"
if [[ ! -x "$dir/$name" ]]; then
  echo "go-tool: installing $spec into $dir" >&2
  # GOFLAGS and GOWORK of the caller are the repository's, not the tool's.
  if ! GOBIN="$dir" GOFLAGS= GOWORK=off go install "$spec" >&2; then
    echo "go-tool: go install $spec failed (above); the Go module proxy must be reachable for a first install" >&2
    exit 1
  fi
fi
echo "$dir/$name"
