#!/usr/bin/env bash
# bench/codegen/run.sh is `make bench-codegen`: it installs the pinned
# protoc and protoc-gen-go, then measures msgcontract generate --lang go
# --with-pb against protoc --go_out (and --go_out --msgcontract_out, the
# same files), protoc-gen-msgcontract's cost in a Go+Java+Python protoc
# build, and the same on a corpus 90% without options: wall, CPU and peak
# RSS, printed side by side with ratio lines (bench/codegen/README.md).
# Extra arguments go to the Go program (e.g. -runs 9 -files 400 -profile DIR).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/install-protoc.sh
go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
go run ./bench/codegen -repo . "$@"
