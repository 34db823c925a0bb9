#!/usr/bin/env bash
# Installs buf (pinned) into .tools/bin with `go install` through the Go
# module proxy, for `make compare-buf` and `make bench-breaking`, which
# compare `msgcontract breaking` with `buf breaking`. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
version=v1.75.0
bin="$PWD/.tools/bin"
if [[ -x "$bin/buf" ]] && [[ "$("$bin/buf" --version 2>/dev/null)" == "${version#v}" ]]; then
  exit 0
fi
echo "setup: installing buf $version into .tools/bin (go install, a few minutes the first time)"
mkdir -p "$bin"
GOBIN="$bin" go install "github.com/bufbuild/buf/cmd/buf@$version"
