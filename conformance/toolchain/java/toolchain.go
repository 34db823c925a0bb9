package java

import (
	"archive/zip"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"google.golang.org/protobuf/types/descriptorpb"
)

// pom is the build of generated Java: the protobuf runtime matching the
// pinned protoc, JsonFormat, JUnit 5 and sqlite-jdbc. It is embedded so the
// runner works from any directory.
//
//go:embed pom.xml
var pom []byte

// ProtocVersion is the Maven Central version of the pinned protoc
// (com.google.protobuf:protoc), protoc 36.2, the release of the pinned
// protobuf-java 4.36.2: the newest end of PROTOBUF's Java range
// (JAVA_PROTOBUF_NEWEST), the default toolchain. pom.xml's protobuf.version
// and protoc.version are the same.
const ProtocVersion = "4.36.2"

// OldestProtocVersion is the oldest end of PROTOBUF's Java range
// (JAVA_PROTOBUF_OLDEST): protoc 29.0 with protobuf-java 4.29.0.
const OldestProtocVersion = "4.29.0"

// End is one end of PROTOBUF's Java range: the protoc that generates the
// message classes and the protobuf-java (and protobuf-java-util) they run
// on, always the same release, since protobuf-java refuses code from a
// newer protoc. The msgcontract runtime jar is the same at both ends (its
// own classes come from the oldest protoc). The zero value is Newest.
type End int

const (
	// Newest is ProtocVersion, what make test runs everywhere.
	Newest End = iota
	// Oldest is OldestProtocVersion.
	Oldest
)

// Version is the end's protoc and protobuf-java version on Maven Central.
func (e End) Version() string {
	if e == Oldest {
		return OldestProtocVersion
	}
	return ProtocVersion
}

// MaxEdition is the newest edition the end's protoc compiles (protoc 29.0
// stops at 2023, "later than the maximum supported edition") and its
// protobuf-java loads: what a conformance executor of the end declares.
func (e End) MaxEdition() descriptorpb.Edition {
	if e == Oldest {
		return descriptorpb.Edition_EDITION_2023
	}
	return descriptorpb.Edition_EDITION_2024
}

// Toolchain names the end's protobuf for messages, as "protobuf-java 4.29.0
// (protoc 29.0)".
func (e End) Toolchain() string {
	v := e.Version()
	return "protobuf-java " + v + " (protoc " + strings.TrimPrefix(v, "4.") + ")"
}

// String names the end: "newest" or "oldest".
func (e End) String() string {
	if e == Oldest {
		return "oldest"
	}
	return "newest"
}

// Toolchain is what compiling and running generated Java needs, resolved
// from Maven Central through the local Maven repository.
type Toolchain struct {
	// End is the end of PROTOBUF's Java range it was resolved for.
	End End
	// Dir holds the pom, the protoc binary and the well-known .proto files.
	Dir string
	// Classpath lists the dependency jars, test scope included.
	Classpath []string
	// Protoc is the pinned protoc binary of End.
	Protoc string
	// Include holds google/protobuf/*.proto, taken from the protobuf-java
	// jar, and msgcontract/v1/*.proto, taken from the msgcontract-runtime
	// jar, for protoc's -I.
	Include string
	// Javac and Java are the JDK tools.
	Javac, Java string
}

// Shared resolves the toolchain of End on first use and hands the same one
// to every later caller, so that a process building Java many times (the
// conformance runner, the corpus tests) resolves it once. Its owner calls
// Close when done. The zero value is ready to use, at the newest end.
type Shared struct {
	// End is the end of the range to resolve; set it before the first
	// call to Tools.
	End   End
	once  sync.Once
	tools *Toolchain
	err   error
}

// Tools resolves the toolchain on the first call and returns it.
func (s *Shared) Tools(ctx context.Context) (*Toolchain, error) {
	s.once.Do(func() { s.tools, s.err = ResolveEnd(ctx, s.End) })
	return s.tools, s.err
}

// Close removes the toolchain's directory, if it was resolved.
func (s *Shared) Close() error {
	if s.tools == nil {
		return nil
	}
	return s.tools.Close()
}

func protocClassifier() (string, error) {
	osName := map[string]string{"linux": "linux", "darwin": "osx", "windows": "windows"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch_64"}[runtime.GOARCH]
	if osName == "" || arch == "" {
		return "", fmt.Errorf("no protoc on Maven Central for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return osName + "-" + arch, nil
}

// Resolve resolves the toolchain of the newest end (ResolveEnd).
func Resolve(ctx context.Context) (*Toolchain, error) {
	return ResolveEnd(ctx, Newest)
}

// ResolveEnd resolves the toolchain of end into a new temporary directory,
// which Close removes. It needs mvn and a JDK 17 on PATH and
// io.msgcontract:msgcontract-runtime in the local Maven repository (make
// runtime-java); the first run downloads from Maven Central into ~/.m2.
func ResolveEnd(ctx context.Context, end End) (_ *Toolchain, err error) {
	for _, bin := range []string{"mvn", "javac", "java"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("java toolchain: %s is not on PATH; install a JDK 17 and Maven 3.8+ (scripts/setup-java.sh and make runtime-java resolve the rest)", bin)
		}
	}
	classifier, err := protocClassifier()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "msgcontract-java-")
	if err != nil {
		return nil, err
	}
	version := end.Version()
	t := &Toolchain{End: end, Dir: dir, Include: filepath.Join(dir, "include"), Javac: "javac", Java: "java"}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "pom.xml"), pom, 0o644); err != nil {
		return nil, err
	}
	cpFile := filepath.Join(dir, "classpath.txt")
	args := append([]string{"-B", "-q", "-f", filepath.Join(dir, "pom.xml")}, t.MavenProperties()...)
	args = append(args, "-Dprotoc.classifier="+classifier,
		"dependency:build-classpath", "-Dmdep.includeScope=test", "-Dmdep.outputFile="+cpFile,
		"dependency:copy", "-DoutputDirectory="+dir, "-Dmdep.useBaseVersion=true")
	cmd := exec.CommandContext(ctx, "mvn", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("java toolchain: mvn: %v\n%s", err, out)
	}
	cp, err := os.ReadFile(cpFile)
	if err != nil {
		return nil, err
	}
	t.Classpath = strings.Split(strings.TrimSpace(string(cp)), string(os.PathListSeparator))
	t.Protoc = filepath.Join(dir, "protoc-"+version+"-"+classifier+".exe")
	if err := os.Chmod(t.Protoc, 0o755); err != nil {
		return nil, fmt.Errorf("java toolchain: protoc: %w", err)
	}
	for _, jar := range t.Classpath {
		base := filepath.Base(jar)
		switch {
		case base == "protobuf-java-"+version+".jar":
			err = extractProtos(jar, "google/protobuf/", t.Include)
		case strings.HasPrefix(base, "msgcontract-runtime-"):
			err = extractProtos(jar, "msgcontract/", t.Include)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, p := range []string{"google/protobuf/descriptor.proto", "msgcontract/v1/options.proto"} {
		if _, err := os.Stat(filepath.Join(t.Include, filepath.FromSlash(p))); err != nil {
			return nil, fmt.Errorf("java toolchain: no %s in the protobuf-java and msgcontract-runtime jars (run make runtime-java): %w", p, err)
		}
	}
	return t, nil
}

// MavenProperties are the -D flags that select t's end in a Maven build of
// the pom in Dir (mvn -f Dir/pom.xml ...): its protobuf.version and
// protoc.version name the newest end, and are set for either.
func (t *Toolchain) MavenProperties() []string {
	v := t.End.Version()
	return []string{"-Dprotobuf.version=" + v, "-Dprotoc.version=" + v}
}

// extractProtos copies the .proto files under prefix out of jar.
func extractProtos(jar, prefix, dst string) error {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, prefix) || !strings.HasSuffix(f.Name, ".proto") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		_, err = io.Copy(&buf, rc)
		rc.Close()
		if err != nil {
			return err
		}
		p := filepath.Join(dst, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Close removes the toolchain's temporary directory.
func (t *Toolchain) Close() error {
	return os.RemoveAll(t.Dir)
}

// Protoc is a protoc of a given Maven version with the .proto files of the
// protobuf-java jar of the same version (google/protobuf/descriptor.proto,
// java_features.proto and the well-known types; not cpp_features.proto or
// go_features.proto, which that jar lacks).
type Protoc struct {
	// Dir holds the binary and Include; Close removes it.
	Dir string
	// Path is the protoc binary.
	Path string
	// Include holds google/protobuf/*.proto for protoc's -I.
	Include string
}

// ProtocFor resolves com.google.protobuf:protoc and protobuf-java of the
// given version (e.g. "4.36.2", protoc 36.2) into a new temporary directory
// through Maven, which downloads them into ~/.m2 the first time. It needs
// mvn on PATH (scripts/setup-java.sh). Unlike Resolve it needs no JDK
// beyond Maven's own and no msgcontract jars, and it leaves ProtocVersion's
// protoc alone.
func ProtocFor(ctx context.Context, version string) (_ *Protoc, err error) {
	if _, err := exec.LookPath("mvn"); err != nil {
		return nil, fmt.Errorf("protoc %s: mvn is not on PATH; install a JDK 17 and Maven 3.8+ (run scripts/setup-java.sh)", version)
	}
	classifier, err := protocClassifier()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "msgcontract-protoc-")
	if err != nil {
		return nil, err
	}
	p := &Protoc{Dir: dir, Include: filepath.Join(dir, "include")}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	for _, artifact := range []string{
		"com.google.protobuf:protoc:" + version + ":exe:" + classifier,
		"com.google.protobuf:protobuf-java:" + version,
	} {
		// Run in the empty directory: dependency:copy needs no project.
		cmd := exec.CommandContext(ctx, "mvn", "-B", "-q", "dependency:copy",
			"-Dartifact="+artifact, "-DoutputDirectory="+dir, "-Dmdep.useBaseVersion=true")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("protoc %s: mvn dependency:copy %s: %v (run scripts/setup-java.sh)\n%s", version, artifact, err, out)
		}
	}
	p.Path = filepath.Join(dir, "protoc-"+version+"-"+classifier+".exe")
	if err := os.Chmod(p.Path, 0o755); err != nil {
		return nil, fmt.Errorf("protoc %s: %w", version, err)
	}
	if err := extractProtos(filepath.Join(dir, "protobuf-java-"+version+".jar"), "google/protobuf/", p.Include); err != nil {
		return nil, fmt.Errorf("protoc %s: protobuf-java jar: %w", version, err)
	}
	return p, nil
}

// Close removes the directory of the protoc.
func (p *Protoc) Close() error {
	return os.RemoveAll(p.Dir)
}
