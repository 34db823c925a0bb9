#!/usr/bin/env bash
# Installs buf (pinned) into .tools/bin, for `make compare-buf`,
# `make bench-breaking` and the `buf generate` tests. buf's own native
# binary comes from the npm registry (@bufbuild/buf-linux-x64, the package
# @bufbuild/buf installs for this platform): seconds, where building it
# with `go install` takes minutes on two cores. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
version=1.75.0
bin="$PWD/.tools/bin"
if [[ -x "$bin/buf" ]] && [[ "$("$bin/buf" --version 2>/dev/null)" == "$version" ]]; then
  exit 0
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) pkg=buf-linux-x64 ;;
  Linux-aarch64) pkg=buf-linux-aarch64 ;;
  Darwin-arm64) pkg=buf-darwin-arm64 ;;
  Darwin-x86_64) pkg=buf-darwin-x64 ;;
  *) echo "setup: no buf package for $(uname -s)-$(uname -m); install buf $version on PATH as .tools/bin/buf" >&2; exit 1 ;;
esac
command -v npm >/dev/null || { echo "setup: npm is needed to install buf (Node.js from Debian: apt-get install npm)" >&2; exit 1; }
echo "setup: installing buf $version into .tools/bin (npm package @bufbuild/$pkg)"
mkdir -p "$bin" .tools/npm
npm install --silent --no-save --no-audit --no-fund --ignore-scripts --prefix .tools/npm "@bufbuild/$pkg@$version" >&2
ln -sf "../npm/node_modules/@bufbuild/$pkg/bin/buf" "$bin/buf"
"$bin/buf" --version >/dev/null
