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
)

// pom is the build of generated Java: the protobuf runtime matching the
// pinned protoc, JsonFormat, JUnit 5 and sqlite-jdbc. It is embedded so the
// runner works from any directory.
//
//go:embed pom.xml
var pom []byte

// ProtocVersion is the Maven Central version of the pinned protoc
// (com.google.protobuf:protoc), protoc 29.0, the release of the pinned
// protobuf-java 4.29.0.
const ProtocVersion = "4.29.0"

// Toolchain is what compiling and running generated Java needs, resolved
// from Maven Central through the local Maven repository.
type Toolchain struct {
	// Dir holds the pom, the protoc binary and the well-known .proto files.
	Dir string
	// Classpath lists the dependency jars, test scope included.
	Classpath []string
	// Protoc is the pinned protoc binary.
	Protoc string
	// Include holds google/protobuf/*.proto, taken from the protobuf-java
	// jar, and msgcontract/v1/*.proto, taken from the msgcontract-runtime
	// jar, for protoc's -I.
	Include string
	// Javac and Java are the JDK tools.
	Javac, Java string
}

// Shared resolves the toolchain on first use and hands the same one to
// every later caller, so that a process building Java many times (the
// conformance runner, the corpus tests) resolves it once. Its owner calls
// Close when done. The zero value is ready to use.
type Shared struct {
	once  sync.Once
	tools *Toolchain
	err   error
}

// Tools resolves the toolchain on the first call and returns it.
func (s *Shared) Tools(ctx context.Context) (*Toolchain, error) {
	s.once.Do(func() { s.tools, s.err = Resolve(ctx) })
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

// Resolve resolves the toolchain into a new temporary directory, which
// Close removes. It needs mvn and a JDK 17 on PATH and
// io.msgcontract:msgcontract-runtime in the local Maven repository (make
// runtime-java); the first run downloads from Maven Central into ~/.m2.
func Resolve(ctx context.Context) (_ *Toolchain, err error) {
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
	t := &Toolchain{Dir: dir, Include: filepath.Join(dir, "include"), Javac: "javac", Java: "java"}
	defer func() {
		if err != nil {
			t.Close()
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "pom.xml"), pom, 0o644); err != nil {
		return nil, err
	}
	cpFile := filepath.Join(dir, "classpath.txt")
	cmd := exec.CommandContext(ctx, "mvn", "-B", "-q", "-f", filepath.Join(dir, "pom.xml"),
		"dependency:build-classpath", "-Dmdep.includeScope=test", "-Dmdep.outputFile="+cpFile,
		"dependency:copy", "-Dartifact=com.google.protobuf:protoc:"+ProtocVersion+":exe:"+classifier,
		"-DoutputDirectory="+dir, "-Dmdep.useBaseVersion=true")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("java toolchain: mvn: %v\n%s", err, out)
	}
	cp, err := os.ReadFile(cpFile)
	if err != nil {
		return nil, err
	}
	t.Classpath = strings.Split(strings.TrimSpace(string(cp)), string(os.PathListSeparator))
	t.Protoc = filepath.Join(dir, "protoc-"+ProtocVersion+"-"+classifier+".exe")
	if err := os.Chmod(t.Protoc, 0o755); err != nil {
		return nil, fmt.Errorf("java toolchain: protoc: %w", err)
	}
	for _, jar := range t.Classpath {
		base := filepath.Base(jar)
		switch {
		case base == "protobuf-java-"+ProtocVersion+".jar":
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
