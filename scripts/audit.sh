#!/usr/bin/env bash
# scripts/audit.sh (make audit; .ci/run runs it after make test): the
# dependency vulnerability audit, offline (docs/release.md, "SBOMs and
# audits").
#
# Go: govulncheck (security/versions.env) on the tool module and every
# runtime-go module, each with its own go.mod (GOWORK=off, as a user builds
# it), against the Go vulnerability database at VULNDB_VERSION: the OSV
# files of the golang.org/x/vulndb module, fetched through the Go module
# proxy, indexed by that module's own command indexdb into
# .build/vulndb/<version>/ (govulncheck -db file://...). govulncheck
# reports a vulnerability only where the code calls the vulnerable
# function; each such finding fails the audit unless
# security/vuln-exceptions.txt lists its ID with a reason.
#
# Python and Java are not audited: no vulnerability database for PyPI or
# Maven packages can be had through the package registries this project's
# machines reach (docs/release.md says what was tried); the script says so
# in its output rather than pass silently.
#
# Prints one line per module and ends with "audit: N passed, M failed";
# exits 1 when a module has a finding that is not excepted.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
# shellcheck source=../security/versions.env
source security/versions.env
exceptions=security/vuln-exceptions.txt
modules=(. runtime-go runtime-go/transport/kafka runtime-go/transport/natsjs runtime-go/transport/rabbitmq runtime-go/transport/rocketmq runtime-go/sqldb/mysqldb
  runtime-go/dedup/redisfilter runtime-go/bench)
say() { echo "audit: $*"; }
die() { echo "audit: $*" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

govulncheck="$(bash scripts/go-tool.sh "$GOVULNCHECK")"
db="$root/.build/vulndb/$VULNDB_VERSION"
if [[ ! -f "$db/index/db.json" ]]; then
  indexdb="$(bash scripts/go-tool.sh "golang.org/x/vulndb/cmd/indexdb@$VULNDB_VERSION")"
  say "fetching golang.org/x/vulndb@$VULNDB_VERSION through the Go module proxy"
  src="$(cd "$tmp" && GOFLAGS= GOWORK=off go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')" ||
    die "go mod download golang.org/x/vulndb@$VULNDB_VERSION failed (above); the Go module proxy must be reachable the first time"
  [[ -d "$src/data/osv" ]] || die "golang.org/x/vulndb@$VULNDB_VERSION has no data/osv/ (in ${src:-?}); pick another VULNDB_VERSION in security/versions.env"
  say "indexing $(find "$src/data/osv" -name 'GO-*.json' | wc -l) OSV entries into $db"
  rm -rf "$db.tmp" && mkdir -p "$(dirname "$db")"
  "$indexdb" -vulns "$src/data/osv" -out "$db.tmp" || die "indexdb failed (above) on $src/data/osv"
  rm -rf "$db" && mv "$db.tmp" "$db"
fi
# The date of the database is the pseudo-version's (yyyymmddhhmmss).
stamp="$(sed -E 's/^v0\.0\.0-([0-9]{4})([0-9]{2})([0-9]{2}).*/\1-\2-\3/' <<<"$VULNDB_VERSION")"
say "Go: govulncheck ${GOVULNCHECK##*@}, vulnerability database golang.org/x/vulndb@$VULNDB_VERSION ($stamp; offline, $db)"

# The exception IDs (first field of each line that is not a comment); each
# needs a reason after it.
[[ -f "$exceptions" ]] || die "$exceptions is missing"
while read -r id reason; do
  [[ -z "$id" || "$id" == \#* ]] && continue
  [[ "$id" =~ ^GO-[0-9]{4}-[0-9]+$ ]] || die "$exceptions: \"$id\" is not a Go vulnerability ID (GO-YYYY-NNNN)"
  [[ -n "$reason" ]] || die "$exceptions: $id has no reason; say after it why the finding is accepted"
  echo "$id"
done <"$exceptions" >"$tmp/excepted"

passed=0 failed=0
for m in "${modules[@]}"; do
  name="github.com/msgcontract/msgcontract${m#.}"
  [[ "$m" == . ]] || name="github.com/msgcontract/msgcontract/$m"
  start=$SECONDS
  # -format json always exits 0 on findings; a non-zero exit is an error
  # (a package that does not build, a database it cannot read).
  if ! (cd "$m" && GOWORK=off GOFLAGS= "$govulncheck" -db "file://$db" -format json ./... >"$tmp/out.json" 2>"$tmp/err"); then
    cat "$tmp/err" >&2
    say "$name: FAILED (govulncheck exited non-zero; its errors are above)"
    failed=$((failed + 1))
    continue
  fi
  # The findings govulncheck traced to a called function, one line each:
  # ID, module@version, fixed version, an example call.
  python3 - "$tmp/out.json" >"$tmp/called" <<'PY'
import json, sys
text, dec, pos, seen = open(sys.argv[1]).read(), json.JSONDecoder(), 0, {}
while True:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos >= len(text):
        break
    msg, pos = dec.raw_decode(text, pos)
    f = msg.get("finding")
    if not f or not f.get("trace") or not f["trace"][0].get("function"):
        continue  # a vulnerable module or package the code does not call
    t = f["trace"][0]
    call = f["trace"][-1]
    where = call.get("position", {})
    key = (f["osv"], t.get("module", "?"))
    seen.setdefault(key, "%s %s@%s fixed:%s called-from:%s.%s(%s:%s)" % (
        f["osv"], t.get("module", "?"), t.get("version", "?"), f.get("fixed_version") or "none",
        call.get("package", "?"), call.get("function", "?"),
        where.get("filename", "?"), where.get("line", "?")))
for k in sorted(seen):
    print(seen[k])
PY
  new=() old=()
  while read -r id rest; do
    if grep -qxF "$id" "$tmp/excepted"; then old+=("$id"); else new+=("$id $rest"); fi
  done <"$tmp/called"
  if ((${#new[@]})); then
    say "$name: FAILED: ${#new[@]} called vulnerabilities not in $exceptions ($((SECONDS - start)) s):"
    printf 'audit:   %s\n' "${new[@]}"
    failed=$((failed + 1))
  else
    say "$name: ok (${#old[@]} excepted: ${old[*]:-none}; $((SECONDS - start)) s)"
    passed=$((passed + 1))
  fi
  cat "$tmp/called" >>"$tmp/all-called"
done

# An exception no module needs any more is stale: said, not failed.
touch "$tmp/all-called"
while read -r id; do
  grep -q "^$id " "$tmp/all-called" || say "note: $exceptions lists $id, which no module calls any more; remove it"
done <"$tmp/excepted"

say "Python, Java: NOT audited: no vulnerability database for PyPI or Maven packages is reachable through the package registries (docs/release.md, \"SBOMs and audits\")"
if ((failed)); then
  say "a finding fails the audit until it is fixed (usually: raise the module in go.mod, or the Go toolchain for the standard library, to its fixed version) or listed in $exceptions with the reason it is accepted"
fi
echo "audit: $passed passed, $failed failed"
((failed == 0))
