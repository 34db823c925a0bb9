#!/usr/bin/env bash
# scripts/dist/maven.sh (run by `make dist`) writes dist/maven/: a Maven
# repository (the layout `mvn deploy` writes to a file:// URL) holding
# io.msgcontract:msgcontract-runtime-parent (POM), msgcontract-runtime (core)
# msgcontract-runtime-kafka, msgcontract-runtime-rabbitmq, msgcontract-runtime-rocketmq,
# msgcontract-runtime-micrometer and msgcontract-spring-kafka at version $VERSION (default: the VERSION
# file), each jar with its -sources.jar and -javadoc.jar (the profile
# `release` of runtime-java/pom.xml), and each artifact's CycloneDX SBOM
# <artifactId>-X.Y.Z-cyclonedx.json (cyclonedx-maven-plugin, in the same
# profile), and SHA256SUMS of all of them. Built from the files git tracks at
# HEAD, never from the work tree, tests skipped (make test runs them).
#
# Reproducible: project.build.outputTimestamp is SOURCE_DATE_EPOCH (the
# commit's time), and the maven-metadata.xml files' lastUpdated is set to it
# (their checksums recomputed). The script deploys twice, from two copies of
# the commit, and fails unless both repositories are byte-identical.
#
# Refuses a work tree with uncommitted changes unless DIST_ALLOW_DIRTY=1.
# Needs a JDK 17 and Maven 3.8+; plugins and dependencies come from
# ~/.m2 (scripts/setup-java.sh resolves them) or Maven Central.
set -euo pipefail
tag=dist-maven
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
stamp="$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d%H%M%S)"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
group=io/msgcontract
artifacts=(msgcontract-runtime msgcontract-runtime-kafka msgcontract-runtime-rabbitmq msgcontract-runtime-rocketmq msgcontract-runtime-micrometer msgcontract-spring-kafka)

# deploy N: extracts HEAD into $tmp/srcN and deploys into $tmp/repoN.
deploy() {
  local n="$1" src="$tmp/src$1" repo="$tmp/repo$1"
  mkdir -p "$src"
  git archive --format=tar "$commit" | tar -x -C "$src"
  # The parent's version, each module's parent version and own version
  # (if it writes one), as written in the POMs.
  local p got versions
  for p in runtime-java/pom.xml runtime-java/core/pom.xml runtime-java/kafka/pom.xml runtime-java/rabbitmq/pom.xml runtime-java/rocketmq/pom.xml runtime-java/micrometer/pom.xml runtime-java/spring-kafka/pom.xml; do
    versions="$(sed -n -e '/<parent>/,/<\/parent>/s#^ *<version>\(.*\)</version>#\1#p' -e 's#^  <version>\(.*\)</version>#\1#p' "$src/$p")"
    [[ -n "$versions" ]] || die "$p at $commit names no version (neither <version> nor <parent><version>)"
    for got in $versions; do
      [[ "$got" == "$VERSION" ]] || die "$p at $commit says version \"$got\", the release is $VERSION; set it (and the VERSION file) to $VERSION, commit, and run again"
    done
  done
  grep -q "RUNTIME = \"$VERSION\";" "$src/runtime-java/core/src/main/java/io/msgcontract/support/Version.java" ||
    die "io.msgcontract.support.Version.RUNTIME at $commit is not \"$VERSION\"; set it to the release's version, commit, and run again"
  # -Dmaven.test.skip: the tests are not compiled either; install skipped,
  # so ~/.m2's msgcontract-runtime stays what make runtime-java tested.
  if ! (cd "$src/runtime-java" && mvn -B -Dstyle.color=never -Prelease \
    -Dmaven.test.skip=true -Dmaven.install.skip=true \
    -Dproject.build.outputTimestamp="$SOURCE_DATE_EPOCH" \
    -DaltDeploymentRepository="dist::file://$repo" \
    deploy >"$tmp/mvn$n.log" 2>&1); then
    grep -E '^\[(ERROR|WARNING)\]' "$tmp/mvn$n.log" | tail -n 40 >&2
    die "mvn deploy failed in runtime-java (run $n; its errors are above)"
  fi
  # maven-metadata.xml says when it was deployed; the release says when
  # its commit was made.
  local m a
  while IFS= read -r m; do
    sed -i "s#<lastUpdated>[0-9]*</lastUpdated>#<lastUpdated>$stamp</lastUpdated>#" "$m"
    for a in md5 sha1 sha256 sha512; do
      if [[ -f "$m.$a" ]]; then
        "${a}sum" "$m" | cut -d' ' -f1 | tr -d '\n' >"$m.$a"
      fi
    done
  done < <(find "$repo" -name maven-metadata.xml)
}

say "deploying io.msgcontract:msgcontract-runtime{-parent,,-kafka,-rabbitmq,-rocketmq,-micrometer} and msgcontract-spring-kafka $VERSION from $commit (SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH), twice"
deploy 1
deploy 2
if ! diff -r "$tmp/repo1" "$tmp/repo2" >"$tmp/diff" 2>&1; then
  cat "$tmp/diff" >&2
  die "two deploys of the same commit differ (above): the Maven artifacts are not reproducible"
fi
say "two deploys are byte-identical"

repo="$tmp/repo1"
[[ -f "$repo/$group/msgcontract-runtime-parent/$VERSION/msgcontract-runtime-parent-$VERSION.pom" ]] ||
  die "the deploy wrote no msgcontract-runtime-parent-$VERSION.pom"
for a in "${artifacts[@]}"; do
  for f in "$a-$VERSION.pom" "$a-$VERSION.jar" "$a-$VERSION-sources.jar" "$a-$VERSION-javadoc.jar" "$a-$VERSION-cyclonedx.json"; do
    [[ -f "$repo/$group/$a/$VERSION/$f" ]] || die "the deploy wrote no $f; check the profile release in runtime-java/pom.xml"
  done
done
[[ -f "$repo/$group/msgcontract-runtime-parent/$VERSION/msgcontract-runtime-parent-$VERSION-cyclonedx.json" ]] ||
  die "the deploy wrote no msgcontract-runtime-parent-$VERSION-cyclonedx.json; check cyclonedx-maven-plugin in the profile release of runtime-java/pom.xml"
# What Maven Central requires of a POM, here or in its parent.
parent_pom="$repo/$group/msgcontract-runtime-parent/$VERSION/msgcontract-runtime-parent-$VERSION.pom"
# (element, not tag: $tag is the prefix of this script's messages)
for element in name description url licenses scm developers; do
  grep -qE "<$element[ >]" "$parent_pom" || die "runtime-java/pom.xml has no <$element>, which Maven Central requires"
done
for a in "${artifacts[@]}"; do
  for element in name description; do
    grep -q "^  <$element>" "$repo/$group/$a/$VERSION/$a-$VERSION.pom" || die "the POM of $a has no <$element> of its own"
  done
done
# The core jar carries msgcontract's protos, for protobuf-maven-plugin in a
# service's build (import "msgcontract/v1/options.proto").
core_jar="$repo/$group/msgcontract-runtime/$VERSION/msgcontract-runtime-$VERSION.jar"
for p in msgcontract/v1/options.proto msgcontract/v1/envelope.proto; do
  unzip -l "$core_jar" "$p" >/dev/null 2>&1 || die "msgcontract-runtime-$VERSION.jar lacks $p"
done
say "POMs carry name, description, url, licenses, scm, developers; msgcontract-runtime-$VERSION.jar holds msgcontract/v1/*.proto"

# SHA256SUMS of every artifact, POM and SBOM (Maven's own .md5 and .sha1
# files aside), paths relative to dist/maven: sha256sum -c SHA256SUMS.
(cd "$repo" && find . -type f ! -name SHA256SUMS ! -name '*.md5' ! -name '*.sha1' ! -name 'maven-metadata.xml*' | LC_ALL=C sort |
  sed 's#^\./##' | xargs sha256sum >SHA256SUMS)
rm -rf dist/maven
mkdir -p dist
cp -r "$repo" dist/maven
(cd dist/maven && find . -name '*.jar' | sort | xargs sha256sum | sed 's/^/dist-maven: /')
say "wrote dist/maven/"
