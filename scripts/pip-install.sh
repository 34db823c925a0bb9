#!/usr/bin/env bash
# pip-install.sh WHO VENV ARGS... runs VENV's pip install ARGS with pip's
# own progress cut to one line per package collected and installed, each
# prefixed with WHO. pip's errors reach stderr unfiltered; its exit status
# is the script's.
set -uo pipefail
who="$1" venv="$2"
shift 2
"$venv/bin/python" -m pip install --progress-bar off --disable-pip-version-check "$@" |
  grep --line-buffered -E '^(Collecting|Installing|Successfully)' | sed -u "s/^/$who: /"
status=("${PIPESTATUS[@]}")
if ((status[0] != 0)); then
  echo "$who: pip failed (exit ${status[0]}); its errors are above" >&2
fi
exit "${status[0]}"
