#!/usr/bin/env bash
# install-protoc.sh installs the protoc that protoc-gen-msgcontract's end-to-end
# test drives, from Debian's package archive (no download outside the
# registries). It is idempotent: when a protoc is on PATH it only reports it.
#
#   bash scripts/install-protoc.sh
#
# Pinned to Debian's protobuf-compiler; set PROTOC_DEB_VERSION to pin an exact
# package version (e.g. 3.21.12-11), which apt-get then insists on.
set -euo pipefail

if command -v protoc >/dev/null 2>&1; then
  echo "install-protoc: $(command -v protoc): $(protoc --version)"
  exit 0
fi

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
