#!/usr/bin/env bash
# install-protoc.sh installs the protoc that protoc-gen-msgcontract's
# end-to-end test and `make bench-codegen` drive, from Debian's package
# archive (nothing is downloaded from outside the package registries). It is
# idempotent: a protoc already on PATH is only reported.
#
#   bash scripts/install-protoc.sh              # protoc (Debian protobuf-compiler)
#
# PROTOC_DEB_VERSION pins an exact Debian package version (e.g. 3.21.12-11).
# buf comes from scripts/install-buf.sh.
set -euo pipefail

if command -v protoc >/dev/null 2>&1; then
  echo "install-protoc: $(command -v protoc): $(protoc --version)"
else
  pkg=protobuf-compiler
  if [[ -n "${PROTOC_DEB_VERSION:-}" ]]; then
    pkg="protobuf-compiler=${PROTOC_DEB_VERSION}"
  fi
  sudo=""
  if [[ "$(id -u)" != 0 ]]; then
    sudo=sudo
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # libprotobuf-dev brings the well-known types (google/protobuf/*.proto).
  $sudo apt-get install -y -qq --no-install-recommends "$pkg" libprotobuf-dev >/dev/null
  echo "install-protoc: $(command -v protoc): $(protoc --version)"
fi

