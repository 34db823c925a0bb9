#!/usr/bin/env bash
# Creates the project virtualenv .venv at the repository root with the pinned
# Python toolchain (protoc via grpcio-tools, the protobuf runtime, mypy,
# pytest) from requirements-dev.txt. Safe to re-run: it only installs what
# is missing or changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3.11}"
if ! command -v "$PYTHON" >/dev/null; then
  PYTHON=python3
fi
if [ ! -x .venv/bin/python ]; then
  echo "setup-python: creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.requirements-dev.sha256
want="$(sha256sum requirements-dev.txt | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "setup-python: installing requirements-dev.txt into .venv ($(grep -oE '^[a-z-]+' requirements-dev.txt | paste -sd' ')); the first time takes minutes"
  bash scripts/pip-install.sh setup-python .venv -r requirements-dev.txt
  echo "$want" >"$stamp"
fi
.venv/bin/python -m grpc_tools.protoc --version
