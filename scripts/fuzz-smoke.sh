#!/usr/bin/env bash
# make fuzz-smoke: runs each parser fuzz target for a fixed number of
# executions (not a duration: a -fuzztime duration races Go's fuzz
# coordinator, golang/go#75804, and fails with a bare "context deadline
# exceeded"), two targets at a time (each fuzzes with -parallel=1, so two
# keep two cores busy; most of a target's time is its instrumented build).
# A target's output is printed when it ends; any failure fails the run,
# naming the target, after the others have finished.
#
#   bash scripts/fuzz-smoke.sh [JOBS]     # JOBS: targets at once, default 2
set -uo pipefail
cd "$(dirname "$0")/.."
jobs="${1:-2}"
go="${GO:-go}"
# module dir, package, fuzz target, executions
targets=(
  ". ./codegen/keytemplate FuzzParse 300000"
  ". ./codegen/model FuzzLoad 20000"
  ". ./codegen/golang FuzzGoComment 2000"
  ". ./registry/schema FuzzParse 25000"
  ". ./registry/api FuzzRequests 20000"
  ". ./internal/corpus FuzzEscaping 6000"
  "runtime-go ./sqldb/mysqldb FuzzRebind 250000"
)
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
declare -A index_of
failed=()
finish() { # reaps one finished job and reports it
  local pid rc
  wait -n -p pid
  rc=$?
  local i=${index_of[$pid]}
  cat "$out/$i.log"
  if ((rc != 0)); then failed+=("${targets[$i]}"); fi
}
running=0
for i in "${!targets[@]}"; do
  read -r dir pkg target n <<<"${targets[$i]}"
  if ((running >= jobs)); then finish; running=$((running - 1)); fi
  (cd "$dir" && echo "fuzz-smoke: $pkg $target, $n executions" && \
    "$go" test "$pkg" -run='^$' -fuzz="^$target\$" -fuzztime="${n}x" -parallel=1 -fuzzminimizetime=0) \
    >"$out/$i.log" 2>&1 &
  index_of[$!]=$i
  running=$((running + 1))
done
while ((running > 0)); do finish; running=$((running - 1)); done
if ((${#failed[@]})); then
  printf 'fuzz-smoke: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz-smoke: ${#targets[@]} targets passed"
