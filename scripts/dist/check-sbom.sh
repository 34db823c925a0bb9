#!/usr/bin/env bash
# scripts/dist/check-sbom.sh DIST_DIR (part of make release-check): every
# artifact of the release has its CycloneDX SBOM (docs/release.md, "SBOMs
# and audits"), and each SBOM
#   - is CycloneDX JSON: bomFormat "CycloneDX", a specVersion;
#   - has no serialNumber (it would differ from build to build);
#   - names the artifact as metadata.component, at the release's version
#     (a binary's and a Python archive's also by the SHA-256 of the file);
#   - lists dependencies the artifact really has (a few known ones each,
#     e.g. echo/v4 and go-sqlite3 for msgcontract-ops, protobuf for the
#     wheel, protobuf-java for the Java runtime's jar);
#   - is covered by the SHA256SUMS of its directory.
# Prints one "release-check: sbom ...: ok" line per artifact kind; fails
# with the list of problems.
set -euo pipefail
dist="${1:?usage: scripts/dist/check-sbom.sh DIST_DIR}"
version="$(cat "$(dirname "$0")/../../VERSION")"
python3 - "$dist" "$version" <<'PY'
import glob, hashlib, json, os, sys

dist, version = sys.argv[1], sys.argv[2]
problems, counts = [], {}


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def listed(sums_file, name):
    try:
        with open(sums_file) as f:
            return any(line.rstrip("\n").endswith("  " + name) for line in f)
    except FileNotFoundError:
        return False


def load(kind, artifact, sbom, sums_file, sums_name):
    """The SBOM of artifact, checked for the common points, or None."""
    counts[kind] = counts.get(kind, 0) + 1
    if not os.path.isfile(sbom):
        problems.append(f"{artifact}: no SBOM (want {sbom})")
        return None
    try:
        with open(sbom) as f:
            bom = json.load(f)
    except ValueError as e:
        problems.append(f"{sbom}: not JSON: {e}")
        return None
    if bom.get("bomFormat") != "CycloneDX" or not bom.get("specVersion"):
        problems.append(f"{sbom}: bomFormat {bom.get('bomFormat')!r}, specVersion {bom.get('specVersion')!r}: not CycloneDX JSON")
    if "serialNumber" in bom:
        problems.append(f"{sbom}: has a serialNumber, which differs from build to build")
    # (CycloneDX leaves out an empty components list, as for the parent POM)
    if not isinstance(bom.setdefault("components", []), list):
        problems.append(f"{sbom}: components is not a list")
        bom["components"] = []
    if not listed(sums_file, sums_name):
        problems.append(f"{sbom}: not in {sums_file}")
    return bom


def component(bom):
    return bom.get("metadata", {}).get("component", {})


def has(bom, sbom, purl_prefixes):
    purls = [c.get("purl", "") for c in bom["components"]]
    for want in purl_prefixes:
        if not any(p.startswith(want) for p in purls):
            problems.append(f"{sbom}: lists no {want}... among its {len(purls)} components")


# dist/bin: every binary, <binary>.cdx.json beside it (cyclonedx-gomod bin).
bin_deps = {
    "msgcontract": ["pkg:golang/google.golang.org/protobuf@", "pkg:golang/github.com/spf13/cobra@"],
    "msgcontract-ops": ["pkg:golang/github.com/labstack/echo/v4@", "pkg:golang/github.com/mattn/go-sqlite3@",
                        f"pkg:golang/github.com/msgcontract/msgcontract/runtime-go@v{version}"],
    "protoc-gen-msgcontract": ["pkg:golang/google.golang.org/protobuf@"],
}
binaries = [p for p in sorted(glob.glob(os.path.join(dist, "bin", "*")))
            if not p.endswith(".cdx.json") and os.path.basename(p) != "SHA256SUMS"]
if not binaries:
    problems.append(f"{dist}/bin holds no binary")
for b in binaries:
    name = os.path.basename(b)
    cmd = name.split(f"-{version}-")[0]
    bom = load("bin", b, b + ".cdx.json", os.path.join(dist, "bin", "SHA256SUMS"), name + ".cdx.json")
    if bom is None:
        continue
    c = component(bom)
    props = {p.get("name"): p.get("value") for p in bom.get("metadata", {}).get("properties", [])}
    if c.get("version") != f"v{version}" or not c.get("purl", "").endswith(f"#cmd/{cmd}"):
        problems.append(f"{b}.cdx.json: metadata.component is {c.get('purl')} {c.get('version')}, not cmd/{cmd} at v{version}")
    if props.get("cdx:gomod:binary:name") != name or props.get("cdx:gomod:binary:hash:SHA-256") != sha256(b):
        problems.append(f"{b}.cdx.json: describes the binary {props.get('cdx:gomod:binary:name')} with SHA-256 {props.get('cdx:gomod:binary:hash:SHA-256')}, not this file")
    has(bom, b + ".cdx.json", bin_deps.get(cmd, []))

# dist/goproxy: every module version, <module>/@v/vX.Y.Z.cdx.json (cyclonedx-gomod mod).
mod_deps = {
    "github.com/msgcontract/msgcontract": ["pkg:golang/github.com/labstack/echo/v4@", "pkg:golang/google.golang.org/protobuf@"],
    "github.com/msgcontract/msgcontract/runtime-go": ["pkg:golang/google.golang.org/protobuf@", "pkg:golang/github.com/jackc/pgx/v5@"],
    "github.com/msgcontract/msgcontract/runtime-go/transport/kafka": ["pkg:golang/github.com/twmb/franz-go@"],
    "github.com/msgcontract/msgcontract/runtime-go/transport/natsjs": ["pkg:golang/github.com/nats-io/nats.go@"],
    "github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq": ["pkg:golang/github.com/rabbitmq/amqp091-go@"],
    "github.com/msgcontract/msgcontract/runtime-go/transport/rocketmq": ["pkg:golang/github.com/apache/rocketmq-client-go/v2@"],
    "github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb": ["pkg:golang/github.com/go-sql-driver/mysql@"],
    "github.com/msgcontract/msgcontract/runtime-go/dedup/redisfilter": ["pkg:golang/github.com/redis/go-redis/v9@"],
}
proxy = os.path.join(dist, "goproxy")
zips = sorted(glob.glob(os.path.join(proxy, "**", "@v", "*.zip"), recursive=True))
if not zips:
    problems.append(f"{proxy} holds no module zip")
for z in zips:
    sbom = z[: -len(".zip")] + ".cdx.json"
    rel = os.path.relpath(sbom, proxy)
    path = os.path.relpath(os.path.dirname(os.path.dirname(z)), proxy).replace(os.sep, "/")  # escaped, lower case here
    bom = load("goproxy", z, sbom, os.path.join(proxy, "SHA256SUMS"), rel.replace(os.sep, "/"))
    if bom is None:
        continue
    c = component(bom)
    if c.get("name") != path or c.get("version") != f"v{version}" or not c.get("purl", "").startswith(f"pkg:golang/{path}@v{version}"):
        problems.append(f"{sbom}: metadata.component is {c.get('name')} {c.get('version')} ({c.get('purl')}), not {path} v{version}")
    if path not in mod_deps:
        problems.append(f"{sbom}: {path} is a module this check does not know; add its dependencies to mod_deps in {sys.argv[0]}")
    has(bom, sbom, mod_deps.get(path, []))

# dist/python: the wheel and the sdist, <file>.cdx.json beside each (cyclonedx-py).
archives = sorted(glob.glob(os.path.join(dist, "python", "*.whl")) + glob.glob(os.path.join(dist, "python", "*.tar.gz")))
if len(archives) != 2:
    problems.append(f"{dist}/python holds {len(archives)} archives, want a wheel and an sdist")
for a in archives:
    name = os.path.basename(a)
    bom = load("python", a, a + ".cdx.json", os.path.join(dist, "python", "SHA256SUMS"), name + ".cdx.json")
    if bom is None:
        continue
    c = component(bom)
    hashes = {h.get("alg"): h.get("content") for h in c.get("hashes", [])}
    if c.get("name") != "msgcontract-runtime" or c.get("version") != version or c.get("purl") != f"pkg:pypi/msgcontract-runtime@{version}?file_name={name}":
        problems.append(f"{a}.cdx.json: metadata.component is {c.get('name')} {c.get('version')} ({c.get('purl')}), not msgcontract-runtime {version}")
    if hashes.get("SHA-256") != sha256(a):
        problems.append(f"{a}.cdx.json: metadata.component's SHA-256 is not that of {name}")
    has(bom, a + ".cdx.json", ["pkg:pypi/protobuf@"])

# dist/maven: each artifact's <artifactId>-X.Y.Z-cyclonedx.json (cyclonedx-maven-plugin).
maven_deps = {
    "msgcontract-runtime-parent": [],
    "msgcontract-runtime": ["pkg:maven/com.google.protobuf/protobuf-java@"],
    "msgcontract-runtime-kafka": [f"pkg:maven/io.msgcontract/msgcontract-runtime@{version}", "pkg:maven/org.apache.kafka/kafka-clients@"],
    "msgcontract-runtime-rabbitmq": [f"pkg:maven/io.msgcontract/msgcontract-runtime@{version}", "pkg:maven/com.rabbitmq/amqp-client@"],
    "msgcontract-runtime-rocketmq": [f"pkg:maven/io.msgcontract/msgcontract-runtime@{version}", "pkg:maven/org.apache.rocketmq/rocketmq-client-java@"],
    "msgcontract-runtime-micrometer": [f"pkg:maven/io.msgcontract/msgcontract-runtime@{version}", "pkg:maven/io.micrometer/micrometer-core@"],
    "msgcontract-spring-kafka": [f"pkg:maven/io.msgcontract/msgcontract-runtime-kafka@{version}", "pkg:maven/org.springframework.kafka/spring-kafka@"],
}
repo = os.path.join(dist, "maven")
for artifact, deps in maven_deps.items():
    d = os.path.join(repo, "io", "msgcontract", artifact, version)
    main = os.path.join(d, f"{artifact}-{version}." + ("pom" if artifact.endswith("-parent") else "jar"))
    sbom = os.path.join(d, f"{artifact}-{version}-cyclonedx.json")
    if not os.path.isfile(main):
        problems.append(f"{main} is missing")
    bom = load("maven", main, sbom, os.path.join(repo, "SHA256SUMS"), os.path.relpath(sbom, repo).replace(os.sep, "/"))
    if bom is None:
        continue
    c = component(bom)
    if (c.get("group"), c.get("name"), c.get("version")) != ("io.msgcontract", artifact, version):
        problems.append(f"{sbom}: metadata.component is {c.get('group')}:{c.get('name')}:{c.get('version')}, not io.msgcontract:{artifact}:{version}")
    has(bom, sbom, deps)

for p in problems:
    print("check-sbom: " + p, file=sys.stderr)
if problems:
    sys.exit(f"check-sbom: {len(problems)} problems (above)")
for kind, what in (("bin", "binaries"), ("goproxy", "Go modules"), ("python", "Python archives"), ("maven", "Maven artifacts")):
    print(f"release-check: sbom: {counts.get(kind, 0)} {what} have a valid CycloneDX SBOM naming them at {version}, with their dependencies, in SHA256SUMS: ok")
PY
