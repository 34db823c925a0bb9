#!/usr/bin/env bash
# scripts/dist/python.sh (run by `make dist`) writes dist/python/: the wheel
# and the sdist of msgcontract-runtime (runtime-python/) at version $VERSION
# (default: the VERSION file), built with `python -m build` from the files git
# tracks at HEAD, never from the work tree. SOURCE_DATE_EPOCH is the commit's
# time, so the archives are reproducible: the script builds twice, from two
# separate copies of the commit, and fails unless both builds are
# byte-identical. Each archive gets its CycloneDX SBOM <file>.cdx.json
# (cyclonedx-py, security/requirements-sbom.txt, in .build/venv-sbom), and
# dist/python/SHA256SUMS covers the four files. Then `twine check --strict`
# on both archives, and the wheel
# must hold the .proto files (for protoc -I), the generated *_pb2 modules and
# the DDL.
#
# Refuses a work tree with uncommitted changes (they would not be in the
# build) unless DIST_ALLOW_DIRTY=1. Needs .venv (scripts/setup-python.sh,
# which it runs) and PyPI for the isolated build environment (setuptools,
# grpcio-tools).
set -euo pipefail
tag=dist-python
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
root="$PWD"

bash scripts/setup-python.sh >/dev/null
py="$root/.venv/bin/python"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# build N: extracts HEAD into $tmp/srcN and builds into $tmp/outN.
build() {
  local n="$1"
  mkdir -p "$tmp/src$n"
  git archive --format=tar "$commit" | tar -x -C "$tmp/src$n"
  local got
  got="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$tmp/src$n/runtime-python/pyproject.toml")"
  if [[ "$got" != "$VERSION" ]]; then
    die "runtime-python/pyproject.toml at $commit says version \"$got\", the release is $VERSION; set [project] version to $VERSION (and the VERSION file), commit, and run again"
  fi
  # PIP_NO_CACHE_DIR: the isolated build environment comes from the index
  # each time, as on a fresh machine.
  if ! (cd "$tmp/src$n/runtime-python" && PIP_NO_CACHE_DIR=1 "$py" -m build --sdist --wheel --outdir "$tmp/out$n" . >"$tmp/build$n.log" 2>&1); then
    tail -n 40 "$tmp/build$n.log" >&2
    die "python -m build failed in runtime-python (build $n; its last lines are above)"
  fi
  # setuptools stamps the files it writes into the sdist (PKG-INFO,
  # setup.cfg, *.egg-info/, the top directory) and the gzip header with the
  # time of the build; git archive gave every other file the commit's time.
  # The sdist is rewritten with the same members in the same order, each
  # with mtime SOURCE_DATE_EPOCH, owner root (0), mode 0644 or 0755, and a
  # gzip header without time or file name.
  "$py" - "$tmp/out$n/msgcontract_runtime-$VERSION.tar.gz" <<'PY'
import gzip, io, os, sys, tarfile
path, epoch = sys.argv[1], int(os.environ["SOURCE_DATE_EPOCH"])
out = io.BytesIO()
with tarfile.open(path, "r:gz") as src, tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as dst:
    for m in src.getmembers():
        m.mtime, m.uid, m.gid, m.uname, m.gname = epoch, 0, 0, "root", "root"
        m.mode = 0o755 if m.isdir() or m.mode & 0o111 else 0o644
        m.pax_headers = {}
        dst.addfile(m, src.extractfile(m) if m.isfile() else None)
with open(path, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=epoch) as f:
    f.write(out.getvalue())
PY
}

# cyclonedx-py (security/requirements-sbom.txt) in a venv of its own.
sbom_venv="$root/.build/venv-sbom"
sbom_want="$(sha256sum security/requirements-sbom.txt | cut -d' ' -f1)"
if [[ "$(cat "$sbom_venv/.requirements-sbom.sha256" 2>/dev/null || true)" != "$sbom_want" ]]; then
  say "installing cyclonedx-py (security/requirements-sbom.txt) into $sbom_venv"
  rm -rf "$sbom_venv"
  "$("$py" -c 'import sys; print(sys._base_executable)')" -m venv "$sbom_venv"
  bash scripts/pip-install.sh dist-python "$sbom_venv" -r security/requirements-sbom.txt >&2 ||
    die "installing security/requirements-sbom.txt into $sbom_venv failed (above); PyPI must be reachable"
  echo "$sbom_want" >"$sbom_venv/.requirements-sbom.sha256"
fi
# The dependencies an SBOM lists: the runtime's required ones (no extra)
# at the versions make test runs them with (PROTOBUF's newest end); a
# user's install resolves within the declared range.
. ./PROTOBUF
sbom_deps=("protobuf==$PYTHON_PROTOBUF_NEWEST")

# sbom N: writes <file>.cdx.json beside the wheel and the sdist in
# $tmp/outN. cyclonedx-py environment reads a venv holding the wheel and
# sbom_deps (nothing else: no pip), with build N's pyproject.toml as the
# root component; --output-reproducible leaves out the serial number and
# takes the time from SOURCE_DATE_EPOCH. The root component then gets its
# purl (with the file's name) and the file's SHA-256, and the JSON is
# written with sorted keys.
sbom() {
  local n="$1" env="$tmp/sbomenv$1" f
  "$("$py" -c 'import sys; print(sys._base_executable)')" -m venv --without-pip "$env"
  "$sbom_venv/bin/python" -m pip --python "$env/bin/python" install --quiet --disable-pip-version-check \
    --no-deps "$tmp/out$n/$wheel" "${sbom_deps[@]}" >"$tmp/sbompip$n.log" 2>&1 ||
    { cat "$tmp/sbompip$n.log" >&2; die "installing $wheel and ${sbom_deps[*]} for its SBOM failed (above)"; }
  "$sbom_venv/bin/cyclonedx-py" environment --pyproject "$tmp/src$n/runtime-python/pyproject.toml" \
    --mc-type library --spec-version 1.6 --output-reproducible --output-format JSON \
    -o "$tmp/sbom$n.json" "$env/bin/python" 2>"$tmp/sbom$n.log" ||
    { cat "$tmp/sbom$n.log" >&2; die "cyclonedx-py environment failed (above)"; }
  for f in "$wheel" "$sdist"; do
    "$sbom_venv/bin/python" - "$tmp/sbom$n.json" "$tmp/out$n/$f" "$VERSION" >"$tmp/out$n/$f.cdx.json" <<'PY'
import hashlib, json, os, sys
bom_file, artifact, version = sys.argv[1:]
with open(bom_file) as f:
    bom = json.load(f)
comp = bom["metadata"]["component"]
if comp.get("name") != "msgcontract-runtime" or comp.get("version") != version:
    sys.exit(f"cyclonedx-py named the root component {comp.get('name')} {comp.get('version')}, not msgcontract-runtime {version}")
comp["purl"] = f"pkg:pypi/msgcontract-runtime@{version}?file_name={os.path.basename(artifact)}"
with open(artifact, "rb") as f:
    comp["hashes"] = [{"alg": "SHA-256", "content": hashlib.sha256(f.read()).hexdigest()}]
json.dump(bom, sys.stdout, indent=2, sort_keys=True)
sys.stdout.write("\n")
PY
  done
}

say "building msgcontract-runtime $VERSION from $commit (SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH), twice"
build 1
build 2
wheel="msgcontract_runtime-$VERSION-py3-none-any.whl"
sdist="msgcontract_runtime-$VERSION.tar.gz"
for f in "$wheel" "$sdist"; do
  [[ -f "$tmp/out1/$f" ]] || die "python -m build wrote no $f (it wrote: $(ls "$tmp/out1" | paste -sd' '))"
done
say "writing the CycloneDX SBOMs of both builds (cyclonedx-py)"
sbom 1
sbom 2
if ! diff -r "$tmp/out1" "$tmp/out2" >/dev/null; then
  for f in "$tmp/out1"/*; do
    cmp "$f" "$tmp/out2/$(basename "$f")" >&2 || true
  done
  die "two builds of the same commit differ (above): the Python artifacts are not reproducible"
fi
say "two builds are byte-identical"

"$root/.venv/bin/twine" --no-color check --strict "$tmp/out1/$wheel" "$tmp/out1/$sdist" | sed 's/^/dist-python: /'

# The wheel's contents: the protos under the directory
# `python -m msgcontract_runtime.include` prints, protoc's output, the DDL.
listing="$("$py" -m zipfile -l "$tmp/out1/$wheel" | awk 'NR > 1 {print $1}')"
for want in \
  msgcontract_runtime/proto/msgcontract/v1/options.proto \
  msgcontract_runtime/proto/msgcontract/v1/envelope.proto \
  msgcontract/v1/options_pb2.py \
  msgcontract/v1/envelope_pb2.py \
  msgcontract_runtime/sql/postgres.sql \
  msgcontract_runtime/sql/sqlite.sql \
  msgcontract_runtime/sql/mysql.sql; do
  grep -qxF "$want" <<<"$listing" || die "$wheel lacks $want; check [tool.setuptools.package-data] in runtime-python/pyproject.toml and setup.py's build hook"
done
say "$wheel holds msgcontract/v1/*.proto, *_pb2.py and sql/*.sql"

rm -rf dist/python
mkdir -p dist/python
cp "$tmp/out1/$wheel" "$tmp/out1/$sdist" "$tmp/out1/$wheel.cdx.json" "$tmp/out1/$sdist.cdx.json" dist/python/
# SHA256SUMS of the archives and their SBOMs (sha256sum -c SHA256SUMS).
(cd dist/python && sha256sum "$wheel" "$wheel.cdx.json" "$sdist" "$sdist.cdx.json" >SHA256SUMS &&
  touch -d "@$SOURCE_DATE_EPOCH" ./* && sed 's/^/dist-python: /' SHA256SUMS)
say "wrote dist/python/"
