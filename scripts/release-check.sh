#!/usr/bin/env bash
# Checks a release in dist/ the way a new user meets it, with nothing of
# this machine's: a temporary empty HOME, GOPATH, Go module and build cache,
# Maven repository (-Dmaven.repo.local) and pip cache. `make release-check`
# builds dist/ first (make dist) and runs every step; each step also runs on
# its own (--only STEP[,STEP...]).
#
# Usage: scripts/release-check.sh [--only STEPS] [--msgcontract BIN] [--keep] [DIST_DIR]
#
#   DIST_DIR          the release to check (default dist): goproxy/, bin/,
#                     python/, maven/ as `make dist` writes them
#   --only STEPS      run only these steps, comma-separated (default: all, in order):
#     binary          scripts/dist/check-go.sh DIST_DIR: installs msgcontract from
#                     DIST_DIR/goproxy (GOPROXY=file://...,https://proxy.golang.org,
#                     GONOSUMDB=github.com/msgcontract/*) and puts it on PATH
#     checksums       sha256sum -c the SHA256SUMS of DIST_DIR/bin, goproxy, python and maven
#     sbom            scripts/dist/check-sbom.sh DIST_DIR: every artifact has a valid
#                     CycloneDX SBOM naming it at VERSION, with its real dependencies
#     go              msgcontract init --lang go; `make run` with runtime-go from DIST_DIR/goproxy
#     python          msgcontract init --lang python; a fresh venv, msgcontract-runtime
#                     from DIST_DIR/python alone (--no-index), then `make run` (mypy --strict included)
#     java            msgcontract init --lang java; `mvn compile exec:java` with a
#                     temporary settings.xml whose active profile adds file://DIST_DIR/maven
#                     (the scaffold's pom names no repository)
#     python-dist     scripts/dist/check-python.sh DIST_DIR (wheel, sdist, extras import)
#     maven-dist      scripts/dist/check-maven.sh DIST_DIR
#     paths           no scaffold file names this checkout's path
#   --msgcontract BIN use this msgcontract for the scaffold steps instead of installing
#                     it from DIST_DIR/goproxy (to check steps against a local build)
#   --keep            keep the temporary directory (logs, scaffolds) and print it;
#                     it is kept anyway when a check failed
#
# Prints "release-check: <what>: ok" or "release-check: <what>: FAILED (...)"
# per check, then "release-check: N passed, M failed". Exits 0 when M is 0,
# 1 when a check failed, 2 on a usage error or a DIST_DIR that is missing.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
all_steps=(binary checksums sbom go python java python-dist maven-dist paths)
steps=() dist=dist bin="" keep=""
usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; }
while (($#)); do
  case "$1" in
    --only) IFS=, read -r -a steps <<<"${2:?--only needs a comma-separated list of steps}"; shift 2 ;;
    --msgcontract) bin="${2:?--msgcontract needs a path}"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "release-check: unknown option $1; see --help" >&2; exit 2 ;;
    *) dist="$1"; shift ;;
  esac
done
((${#steps[@]})) || steps=("${all_steps[@]}")
for s in "${steps[@]}"; do
  [[ " ${all_steps[*]} " == *" $s "* ]] || { echo "release-check: unknown step '$s'; steps: ${all_steps[*]}" >&2; exit 2; }
done
if [[ ! -d "$dist" ]]; then
  echo "release-check: no release directory $dist; run make dist VERSION=X.Y.Z (or pass DIST_DIR)" >&2
  exit 2
fi
dist="$(cd "$dist" && pwd)"
version="$(cat VERSION)"
if [[ -n "$bin" ]]; then
  [[ -x "$bin" ]] || { echo "release-check: --msgcontract $bin is not an executable" >&2; exit 2; }
  bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/release-check.XXXXXX")"
cleanup() {
  # A failed check's log stays where its FAILED line says.
  if [[ -n "$keep" ]] || ((failed > 0)); then echo "release-check: kept $tmp (logs/, scaffolds/, work-*/)"; return; fi
  chmod -R u+w "$tmp" 2>/dev/null # the Go module cache is read-only
  rm -rf "$tmp"
}
passed=0 failed=0
trap cleanup EXIT
mkdir -p "$tmp"/{home,gopath,gocache,gobin,pipcache,m2,logs,scaffolds}
# Nothing of this machine's user: an empty HOME and caches. PATH keeps the
# system's tools (go, python3, mvn, java, make, a C compiler).
export HOME="$tmp/home" XDG_CACHE_HOME="$tmp/home/.cache" XDG_CONFIG_HOME="$tmp/home/.config"
export GOPATH="$tmp/gopath" GOMODCACHE="$tmp/gopath/pkg/mod" GOCACHE="$tmp/gocache" GOBIN="$tmp/gobin"
export GOWORK=off GOFLAGS= GOPROXY="file://$dist/goproxy,https://proxy.golang.org" GONOSUMDB='github.com/msgcontract/*'
export GOPRIVATE= GONOPROXY= GOTOOLCHAIN=local
export PIP_CACHE_DIR="$tmp/pipcache" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CONFIG_FILE=/dev/null
export MAVEN_OPTS="-Dmaven.repo.local=$tmp/m2"
unset PYTHONPATH VIRTUAL_ENV MSGCONTRACT
export PATH="$GOBIN:$PATH"

ok() { echo "release-check: $1: ok"; passed=$((passed + 1)); }
fail() { echo "release-check: $1: FAILED ($2)" >&2; failed=$((failed + 1)); }
# check WHAT CMD...: runs CMD with its output in a log; one check.
check() {
  local what="$1" log
  log="$tmp/logs/$(printf %02d $((passed + failed + 1)))-${what%%:*}.log"
  last_log="$log"
  shift
  # In a bash of its own with -e: bash ignores set -e in a function that
  # runs as a condition (here: in an if or before ||), and in its subshells.
  local rc=0
  bash -eo pipefail -c '"$@"' _ "$@" >"$log" 2>&1 || rc=$?
  if ((rc == 0)); then
    ok "$what"
  else
    tail -n 40 "$log" | sed 's/^/  | /' >&2
    fail "$what" "exit $rc; last lines above, whole log: $log"
    return 1
  fi
}

# The msgcontract the scaffold steps run: --msgcontract, else the one the
# binary step installed, else installed here (not counted: step binary is the check).
msgcontract_bin() {
  if [[ -n "$bin" ]]; then echo "$bin"; return; fi
  if [[ ! -x "$GOBIN/msgcontract" ]]; then
    go install "github.com/msgcontract/msgcontract/cmd/msgcontract@v$version" >"$tmp/logs/install.log" 2>&1 ||
      { echo "release-check: cannot install msgcontract v$version from $dist/goproxy: $(tail -1 "$tmp/logs/install.log")" >&2; return 1; }
  fi
  echo "$GOBIN/msgcontract"
}

step_binary() {
  if [[ -f scripts/dist/check-go.sh ]]; then
    check "binary: scripts/dist/check-go.sh" bash scripts/dist/check-go.sh "$dist" || return
    grep -h '^release-check: ' "$last_log" | sed 's/^/  /'
  fi
  # Whatever check-go.sh did, the binary a user gets: go install from dist/goproxy.
  if [[ ! -x "$GOBIN/msgcontract" ]]; then
    check "binary: go install msgcontract@v$version from dist/goproxy" \
      go install "github.com/msgcontract/msgcontract/cmd/msgcontract@v$version" || return
  fi
  local got
  got="$("$GOBIN/msgcontract" --version 2>&1)"
  if [[ "$got" == *"$version"* ]]; then ok "binary: msgcontract --version says $version"; else fail "binary: msgcontract --version" "printed '$got', want $version"; fi
}

step_checksums() {
  local d
  for d in bin goproxy python maven; do
    if [[ ! -f "$dist/$d/SHA256SUMS" ]]; then fail "checksums: dist/$d/SHA256SUMS" "no $dist/$d/SHA256SUMS"; continue; fi
    check "checksums: dist/$d/SHA256SUMS" bash -c 'cd "$1/$2" && sha256sum --strict -c SHA256SUMS' _ "$dist" "$d"
  done
}

step_sbom() {
  if [[ ! -f scripts/dist/check-sbom.sh ]]; then fail "sbom" "scripts/dist/check-sbom.sh is missing"; return; fi
  check "sbom: scripts/dist/check-sbom.sh" bash scripts/dist/check-sbom.sh "$dist" &&
    grep -h '^release-check: ' "$last_log" | sed 's/^/  /'
}

# init LANG: a fresh scaffold in $tmp/scaffolds/svc_LANG; prints its directory.
init_scaffold() {
  local mc dir="$tmp/scaffolds/svc_$1"
  mc="$(msgcontract_bin)" || return 1
  rm -rf "$dir"
  "$mc" init --lang "$1" "$dir" >&2 || return 1
  echo "$dir"
}

verdict='^svc_[a-z]+: published OrderPaid order-1,? .*consumed: handled 1, duplicates skipped 1; payments recorded: 1'

# Each scaffold builds in a copy: a build writes generated code, venvs and
# target/ that the paths step should not search.
run_go() {
  local dir; dir="$(init_scaffold go)"
  cp -r "$dir" "$tmp/work-go" && cd "$tmp/work-go"
  PATH="$(dirname "$(msgcontract_bin)"):$PATH" make run | tee run.out
  grep -qE "$verdict" run.out
  # runtime-go came from the release, at the version the scaffold requires.
  [[ "$(go list -m -f '{{.Path}} {{.Version}}' github.com/msgcontract/msgcontract/runtime-go)" == "github.com/msgcontract/msgcontract/runtime-go v$version" ]]
  [[ -f "$GOMODCACHE/cache/download/github.com/msgcontract/msgcontract/runtime-go/@v/v$version.zip" ]]
}
step_go() { check "go: msgcontract init --lang go builds and runs against dist/goproxy" run_go; }

run_python() {
  local dir; dir="$(init_scaffold python)"
  cp -r "$dir" "$tmp/work-python" && cd "$tmp/work-python"
  python3 -m venv .venv
  # msgcontract-runtime from the release alone, then the rest from PyPI.
  .venv/bin/pip install --no-index --no-deps --find-links "$dist/python" "msgcontract-runtime==$version"
  .venv/bin/pip install --find-links "$dist/python" -e '.[dev]'
  # (not | grep -q: grep would exit first and pip fail on the broken pipe)
  [[ "$(.venv/bin/python -m pip show msgcontract-runtime)" == *$'\nVersion: '"$version"$'\n'* ]]
  PATH="$tmp/work-python/.venv/bin:$(dirname "$(msgcontract_bin)"):$PATH" VIRTUAL_ENV="$tmp/work-python/.venv" make run | tee run.out
  grep -q 'Success: no issues found' run.out
  grep -qE "$verdict" run.out
}
step_python() { check "python: msgcontract init --lang python builds, type-checks and runs against dist/python" run_python; }

run_java() {
  local dir; dir="$(init_scaffold java)"
  cp -r "$dir" "$tmp/work-java" && cd "$tmp/work-java"
  cat >"$tmp/settings.xml" <<XML
<settings>
  <profiles>
    <profile>
      <id>msgcontract-dist</id>
      <repositories>
        <repository>
          <id>msgcontract-dist</id>
          <url>file://$dist/maven</url>
          <releases><enabled>true</enabled></releases>
          <snapshots><enabled>false</enabled></snapshots>
        </repository>
      </repositories>
    </profile>
  </profiles>
  <activeProfiles><activeProfile>msgcontract-dist</activeProfile></activeProfiles>
</settings>
XML
  PATH="$(dirname "$(msgcontract_bin)"):$PATH" mvn -B -q -s "$tmp/settings.xml" -Dmaven.repo.local="$tmp/m2" compile exec:java | tee run.out
  grep -qE "$verdict" run.out
  # The runtime jar came from dist/maven.
  grep -q 'msgcontract-dist' "$tmp/m2/io/msgcontract/msgcontract-runtime/$version/_remote.repositories"
}
step_java() { check "java: msgcontract init --lang java builds and runs against dist/maven" run_java; }

step_python-dist() {
  if [[ ! -f scripts/dist/check-python.sh ]]; then fail "python-dist" "scripts/dist/check-python.sh is missing"; return; fi
  check "python-dist: scripts/dist/check-python.sh" bash scripts/dist/check-python.sh "$dist" &&
    grep -h '^release-check: ' "$last_log" | sed 's/^/  /'
}

step_maven-dist() {
  if [[ ! -f scripts/dist/check-maven.sh ]]; then fail "maven-dist" "scripts/dist/check-maven.sh is missing"; return; fi
  check "maven-dist: scripts/dist/check-maven.sh" bash scripts/dist/check-maven.sh "$dist" &&
    grep -h '^release-check: ' "$last_log" | sed 's/^/  /'
}

step_paths() {
  local lang found=""
  for lang in go python java; do
    [[ -d "$tmp/scaffolds/svc_$lang" ]] || init_scaffold "$lang" >/dev/null 2>"$tmp/logs/paths-init-$lang.log" ||
      { fail "paths: msgcontract init --lang $lang" "see $tmp/logs/paths-init-$lang.log"; return; }
  done
  if found="$(grep -rlF -- "$root" "$tmp/scaffolds")"; then
    fail "paths: no scaffold names the checkout" "$root appears in: $(echo $found)"
  else
    ok "paths: no scaffold names the checkout ($root)"
  fi
}

# The steps' bodies run in child shells (check): they see these.
export root dist version bin tmp verdict
export -f msgcontract_bin init_scaffold run_go run_python run_java
for s in "${steps[@]}"; do
  "step_$s" || true
done
echo "release-check: $passed passed, $failed failed"
((failed == 0))
