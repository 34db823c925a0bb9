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
	// jar, for protoc's -I.
	Include string
	// Javac and Java are the JDK tools.
	Javac, Java string
}

var (
	toolOnce sync.Once
	tool     *Toolchain
	toolErr  error
)

// Tools resolves the toolchain once per process, into a temporary
// directory kept until the process exits. It needs mvn and a JDK 17 on
// PATH; the first run downloads from Maven Central into ~/.m2.
func Tools(ctx context.Context) (*Toolchain, error) {
	toolOnce.Do(func() { tool, toolErr = resolve(ctx) })
	return tool, toolErr
}

func protocClassifier() (string, error) {
	osName := map[string]string{"linux": "linux", "darwin": "osx", "windows": "windows"}[runtime.GOOS]
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch_64"}[runtime.GOARCH]
	if osName == "" || arch == "" {
		return "", fmt.Errorf("no protoc on Maven Central for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	return osName + "-" + arch, nil
}

func resolve(ctx context.Context) (*Toolchain, error) {
	for _, bin := range []string{"mvn", "javac", "java"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("java toolchain: %s is not on PATH; install a JDK 17 and Maven 3.8+ (scripts/setup-java.sh resolves the rest)", bin)
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
		if strings.Contains(filepath.Base(jar), "protobuf-java-"+strings.TrimPrefix(ProtocVersion, "")) &&
			!strings.Contains(filepath.Base(jar), "util") {
			if err := extractProtos(jar, t.Include); err != nil {
				return nil, err
			}
		}
	}
	if _, err := os.Stat(filepath.Join(t.Include, "google", "protobuf", "descriptor.proto")); err != nil {
		return nil, fmt.Errorf("java toolchain: no google/protobuf/descriptor.proto in the protobuf-java jar: %w", err)
	}
	return t, nil
}

// extractProtos copies the well-known .proto files out of the
// protobuf-java jar.
func extractProtos(jar, dst string) error {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, "google/protobuf/") || !strings.HasSuffix(f.Name, ".proto") {
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

// Cleanup removes the toolchain's temporary directory.
func Cleanup() {
	if tool != nil {
		os.RemoveAll(tool.Dir)
	}
}
