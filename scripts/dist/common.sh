# Sourced by scripts/dist/python.sh and maven.sh (set tag first, e.g.
# tag=dist-python): what every part of make dist does before it builds.
#   - cd to the repository root; VERSION from the environment, else the
#     VERSION file;
#   - say/die print with the part's tag;
#   - refuses a work tree with uncommitted changes (they would not be in a
#     release built from HEAD) unless DIST_ALLOW_DIRTY=1;
#   - commit is HEAD's hash, and SOURCE_DATE_EPOCH its time, whatever the
#     environment says: every part stamps its files with the same time.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
VERSION="${VERSION:-$(cat VERSION)}"
say() { echo "$tag: $*"; }
die() { echo "$tag: $*" >&2; exit 1; }
if [[ -n "$(git status --porcelain)" && "${DIST_ALLOW_DIRTY:-}" != 1 ]]; then
  git status --short >&2
  die "the work tree has uncommitted changes (above), which would not be in the release built from HEAD; commit or stash them, or set DIST_ALLOW_DIRTY=1 to build HEAD anyway"
fi
commit="$(git rev-parse HEAD)"
export SOURCE_DATE_EPOCH="$(git log -1 --format=%ct HEAD)"
