#!/usr/bin/env bash
# bench/codegen/run.sh is `make bench-codegen`: it installs the pinned
# protoc and protoc-gen-go, then times msgcontract generate --lang go
# --with-pb against protoc --go_out --msgcontract_out (the same files) and
# against protoc --go_out alone, on the examples plus 200 synthetic
# contracts, printing wall and CPU times and both ratios. Extra arguments
# go to the Go program (e.g. -runs 9 -files 400).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/install-protoc.sh
go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
go run ./bench/codegen -repo . "$@"
