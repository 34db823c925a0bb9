#!/usr/bin/env bash
# Runs suites that only need CPU, and assert no timing, beside make test's
# broker suites at the lowest CPU priority: those wait on JVM starts, leases
# and timers and leave a core idle much of the time (docs/development.md),
# while a niced job takes only what they leave. make test also compiles Go's
# packages into the build cache this way, at nice 0, while its set-up steps
# wait on the network (make warm-go-cache).
#
#   scripts/background.sh start [--nice N] DIR OWNER -- CMD...
#       runs CMD under nice -n N (19, the lowest priority, unless given) in a
#       process group of its own and returns
#       at once; CMD's output goes to DIR/log and its exit code to DIR/rc. A
#       watchdog stops the whole group when process OWNER (make's pid: the
#       recipe's $$PPID) ends first, so a make that fails or is interrupted
#       leaves nothing running.
#   scripts/background.sh wait DIR
#       waits for CMD (saying so every 30 s), prints its output, and exits
#       with its exit code (1 when the watchdog was killed outright and left
#       none).
set -euo pipefail

usage() {
  echo "usage: background.sh start [--nice N] DIR OWNER -- CMD... | background.sh wait DIR" >&2
  exit 2
}

case "${1:-}" in
start)
  shift
  nice=19
  if [[ "${1:-}" == "--nice" ]]; then
    [[ "${2:-}" =~ ^[0-9]+$ ]] && (($2 <= 19)) || usage
    nice="$2"
    shift 2
  fi
  (($# >= 4)) && [[ "$3" == "--" ]] || usage
  dir="$1" owner="$2"
  shift 3
  kill -0 "$owner" 2>/dev/null || { echo "background: owner process $owner is not running" >&2; exit 2; }
  rm -rf "$dir"
  mkdir -p "$dir"
  # setsid: the job and the watchdog form a group of their own, which the
  # watchdog stops as one (a Ctrl-C to make does not reach it). A new session
  # is also a new scheduler autogroup where the kernel has them
  # (/proc/sys/kernel/sched_autogroup_enabled), and autogroups share the CPU
  # as equals whatever their processes' nice: the session's autogroup gets
  # the job's nice too, else at 19 the job would take half the CPU from
  # make's suites.
  setsid bash -c '
    dir="$1" owner="$2" nice="$3"; shift 3
    echo $$ >"$dir/pid"
    if [[ -w /proc/self/autogroup ]]; then echo "$nice" >/proc/self/autogroup 2>/dev/null || true; fi
    nice -n "$nice" "$@" >"$dir/log" 2>&1 </dev/null &
    job=$!
    while kill -0 "$job" 2>/dev/null; do
      if ! kill -0 "$owner" 2>/dev/null; then
        echo "background: process $owner (make) ended first; stopping: $*" >>"$dir/log"
        echo 143 >"$dir/rc"
        kill -TERM -- "-$$" 2>/dev/null
        exit 143
      fi
      sleep 1
    done
    rc=0
    wait "$job" || rc=$?
    echo "$rc" >"$dir/rc.tmp" && mv "$dir/rc.tmp" "$dir/rc"
  ' background "$dir" "$owner" "$nice" "$@" </dev/null >/dev/null 2>&1 &
  if ((nice == 19)); then
    echo "background: started at the lowest CPU priority: $* (output: $dir/log)"
  else
    echo "background: started at nice $nice: $* (output: $dir/log)"
  fi
  ;;
wait)
  (($# == 2)) || usage
  dir="$2"
  [[ -d "$dir" ]] || { echo "background: nothing was started in $dir (run background.sh start first)" >&2; exit 2; }
  start=$(date +%s) next=30
  while [[ ! -f "$dir/rc" ]]; do
    # A watchdog killed outright (SIGKILL, the OOM killer) writes no exit
    # code: say so instead of waiting for ever.
    if [[ -s "$dir/pid" ]] && ! kill -0 "$(cat "$dir/pid")" 2>/dev/null && [[ ! -f "$dir/rc" ]]; then
      cat "$dir/log"
      echo "background: the background job's watchdog (pid $(cat "$dir/pid")) ended without an exit code; its output is above" >&2
      exit 1
    fi
    if (($(date +%s) - start >= next)); then
      echo "background: still waiting for the background job ($next s)"
      next=$((next + 30))
    fi
    sleep 1
  done
  cat "$dir/log"
  rc=$(cat "$dir/rc")
  if ((rc != 0)); then
    echo "background: the background job failed (exit $rc); its output is above" >&2
  fi
  exit "$rc"
  ;;
*) usage ;;
esac
