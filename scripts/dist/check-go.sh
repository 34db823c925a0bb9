#!/usr/bin/env bash
# The Go part of the release check: what a Go user does with a release,
# from DIST_DIR/goproxy alone (and the usual proxy for third-party
# modules), in an empty GOPATH and module cache, with no replace and no
# go.work:
#   1. go install github.com/msgcontract/msgcontract/cmd/...@vX.Y.Z, and
#      msgcontract --version prints X.Y.Z (likewise the other two);
#   2. go get runtime-go@vX.Y.Z and runtime-go/transport/kafka@vX.Y.Z in a
#      fresh module, which then builds a tiny consumer.
#   3. the hashes the go command computed for those two match the go.sum
#      the release wrote into the tool module.
# Usage: scripts/dist/check-go.sh DIST_DIR   (VERSION env: X.Y.Z, default
# the VERSION file). Prints "release-check: go install from dist/goproxy: ok"
# and exits 0, or says what failed and exits 1.
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: scripts/dist/check-go.sh DIST_DIR (VERSION=X.Y.Z, default the VERSION file)" >&2
  exit 2
fi
proxy_dir="$1/goproxy"
[[ -d "$proxy_dir" ]] && proxy_dir="$(cd "$proxy_dir" && pwd)"
cd "$(dirname "$0")/../.."
version="${VERSION:-$(cat VERSION)}"
version="${version#v}"
if [[ ! -f "$proxy_dir/github.com/msgcontract/msgcontract/@v/v$version.zip" ]]; then
  echo "release-check: go: $proxy_dir has no github.com/msgcontract/msgcontract v$version: run make dist VERSION=$version first" >&2
  exit 1
fi
fail() { echo "release-check: go: $*" >&2; exit 1; }

work="$(mktemp -d)"
# The module cache is read-only; chmod before removing it.
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOPATH="$work/gopath" GOMODCACHE="$work/gopath/pkg/mod" GOBIN="$work/bin"
export GOFLAGS=-mod=mod GOWORK=off GOTOOLCHAIN=local
export GOPROXY="file://$proxy_dir,https://proxy.golang.org" GONOSUMDB='github.com/msgcontract/*'
unset GOPRIVATE GONOPROXY GOINSECURE

log="$work/log"
go install "github.com/msgcontract/msgcontract/cmd/...@v$version" >"$log" 2>&1 ||
  fail "go install github.com/msgcontract/msgcontract/cmd/...@v$version failed:
$(cat "$log")"
for name in msgcontract msgcontract-ops protoc-gen-msgcontract; do
  [[ -x "$GOBIN/$name" ]] || fail "go install wrote no $name into GOBIN"
  got="$("$GOBIN/$name" --version)" || fail "$name --version exited $?"
  [[ "$(cut -d' ' -f1,2 <<<"$got")" == "$name $version" ]] ||
    fail "the installed $name --version prints \"$got\", want \"$name $version\""
done

mkdir "$work/consumer"
cd "$work/consumer"
go mod init example.com/consumer >"$log" 2>&1 || fail "go mod init: $(cat "$log")"
cat >main.go <<'GO'
// A consumer on Kafka, built against the released runtime-go modules.
package main

import (
	"context"
	"database/sql"
	"log"

	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
)

func main() {
	ctx := context.Background()
	tr, err := kafka.New(ctx, kafka.Config{Brokers: []string{"localhost:9092"}})
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
	var db *sql.DB
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.Postgres, Subscriber: tr, Group: "check"})
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(c.Run(ctx))
}
GO
go get "github.com/msgcontract/msgcontract/runtime-go@v$version" \
  "github.com/msgcontract/msgcontract/runtime-go/transport/kafka@v$version" >"$log" 2>&1 ||
  fail "go get runtime-go@v$version runtime-go/transport/kafka@v$version in a fresh module failed:
$(cat "$log")"
go build -o /dev/null . >"$log" 2>&1 || fail "a consumer on runtime-go v$version does not build:
$(cat "$log")"
grep -q "github.com/msgcontract/msgcontract/runtime-go v$version" go.mod ||
  fail "the consumer's go.mod does not require runtime-go v$version:
$(cat go.mod)"
# With GONOSUMDB nothing checks the msgcontract modules' hashes against a
# record, so compare what the go command computed from the zips it fetched
# (the consumer's go.sum) with what the release wrote into the tool
# module's go.sum: a zip changed after make dist shows here.
tool_sum="$GOMODCACHE/github.com/msgcontract/msgcontract@v$version/go.sum"
[[ -f "$tool_sum" ]] || fail "go install left no $tool_sum"
n=0
while read -r line; do
  grep -qxF "$line" "$tool_sum" ||
    fail "the go command hashed a module of dist/goproxy as \"$line\", the release's go.sum says:
$(grep -F "${line%% *} " "$tool_sum" || echo "(nothing for it)")"
  n=$((n + 1))
done < <(grep '^github.com/msgcontract/' go.sum)
((n >= 4)) || fail "the consumer's go.sum has $n lines for msgcontract modules, want 4 (runtime-go and kafka, zip and go.mod):
$(cat go.sum)"
echo "release-check: go install from dist/goproxy: ok"
