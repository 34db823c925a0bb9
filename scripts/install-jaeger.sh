#!/usr/bin/env bash
# Installs Jaeger v1.75.0's `jaeger` binary once, built from the module
# github.com/jaegertracing/jaeger@v1.75.0 (from the Go module proxy), into
# ${XDG_CACHE_HOME:-~/.cache}/msgcontract/jaeger-v1.75.0/ and prints its path.
# `go install github.com/jaegertracing/jaeger/cmd/jaeger@v1.75.0` refuses this
# module (its go.mod has a replace directive), so the script downloads the
# module and runs `go build ./cmd/jaeger` inside it, where the replace applies:
# the same sources and dependency versions Jaeger's own build uses.
# Building it takes many minutes on a fresh machine, so:
#
#   scripts/install-jaeger.sh               build if missing (waits for a build
#                                           already running), print the path
#   scripts/install-jaeger.sh --background  start that build at the lowest CPU
#                                           priority and return at once; its log
#                                           is next to the binary (install.log)
#
# `make test` starts the background build first, so the build uses the CPU the
# other suites leave idle and `make test-trace` only waits for what is left.
# A lock serialises builds: a foreground call waits for a background one.
set -euo pipefail

version=v1.75.0
cache="${XDG_CACHE_HOME:-$HOME/.cache}/msgcontract/jaeger-$version"
bin="$cache/jaeger"
mkdir -p "$cache"

if [[ "${1:-}" == "--background" ]]; then
  [[ -x "$bin" ]] && exit 0
  nohup nice -n 19 bash "$0" >"$cache/install.log" 2>&1 </dev/null &
  echo "install-jaeger: building jaeger $version in the background (log: $cache/install.log)" >&2
  exit 0
fi

exec 9>"$cache/lock"
flock 9
if [[ ! -x "$bin" ]]; then
  command -v go >/dev/null || { echo "install-jaeger: go not found; install Go (go.mod's version)" >&2; exit 1; }
  echo "install-jaeger: building jaeger $version into $cache (go build; many minutes the first time)" >&2
  start=$(date +%s)
  # Into a temporary name first: a killed build leaves no half-written binary.
  tmp=$(mktemp -d "$cache/build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  src=$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "github.com/jaegertracing/jaeger@$version" |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -n "$src" && -f "$src/go.mod" ]] || { echo "install-jaeger: could not download github.com/jaegertracing/jaeger@$version" >&2; exit 1; }
  (cd "$src" && GOFLAGS=-trimpath go build -o "$tmp/jaeger" ./cmd/jaeger) >&2
  mv "$tmp/jaeger" "$bin"
  echo "install-jaeger: built in $(( $(date +%s) - start )) s" >&2
fi
echo "$bin"
