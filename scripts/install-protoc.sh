#!/usr/bin/env bash
# install-protoc.sh installs the protoc that protoc-gen-msgcontract's
# end-to-end test and `make bench-codegen` drive, from Debian's package
# archive (nothing is downloaded from outside the package registries). It is
# idempotent: a protoc already on PATH is only reported.
#
#   bash scripts/install-protoc.sh              # protoc (Debian protobuf-compiler)
#   bash scripts/install-protoc.sh --with-buf   # and buf, built from the Go module proxy
#
# PROTOC_DEB_VERSION pins an exact Debian package version (e.g. 3.21.12-11);
# BUF_VERSION the buf release (default below). scripts/setup.sh installs
# both: the plugin's buf generate test needs buf (building it takes about
# 2.5 CPU-minutes, once).
set -euo pipefail

BUF_VERSION="${BUF_VERSION:-v1.75.0}"
with_buf=false
for arg in "$@"; do
  case "$arg" in
    --with-buf) with_buf=true ;;
    *) echo "install-protoc: unknown argument $arg (use --with-buf)" >&2; exit 2 ;;
  esac
done

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

if $with_buf; then
  gobuf="$(go env GOPATH)/bin/buf"
  if command -v buf >/dev/null 2>&1; then
    echo "install-protoc: $(command -v buf): buf $(buf --version)"
  elif [[ -x "$gobuf" ]]; then
    echo "install-protoc: $gobuf: buf $("$gobuf" --version)"
  else
    echo "install-protoc: building buf ${BUF_VERSION} from the Go module proxy (a few minutes, once)"
    go install "github.com/bufbuild/buf/cmd/buf@${BUF_VERSION}"
    echo "install-protoc: buf ${BUF_VERSION} in $(go env GOPATH)/bin (add it to PATH)"
  fi
fi
