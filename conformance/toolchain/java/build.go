// Package java builds generated Java: it resolves the pinned toolchain
// (protoc, protobuf-java, the msgcontract runtime) through Maven, generates
// protoc's message classes and msgcontract's contract classes for a contract
// set and compiles them, msgcontract's output with -Xlint:all -Werror. The
// Java conformance executor and the demo's Java service build on it.
package java

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/conformance/toolchain/protocin"
	"github.com/msgcontract/msgcontract/contracts"
)

// Build is a compiled output: protoc's classes and msgcontract's, in one
// classes directory.
type Build struct {
	Tools *Toolchain
	// Classes is the output directory of both javac runs.
	Classes string
	// Files are the msgcontract-generated Java files.
	Files []emit.File
}

// Classpath is the classpath to run the build with.
func (b *Build) Classpath() string {
	return strings.Join(append([]string{b.Classes}, b.Tools.Classpath...), string(os.PathListSeparator))
}

// Sources writes the Java sources of set into workDir: protoc's message
// classes (for every proto file set compiled except msgcontract's own,
// which the runtime jar holds, with importPaths) under pb-java, and msgcontract's output under gen-java.
// It returns the two directories.
func (tools *Toolchain) Sources(ctx context.Context, set *model.Set, importPaths []string, workDir string) (pbSrc, genSrc string, files []emit.File, err error) {
	files, err = generate.Run(set, emit.Params{Lang: "java", Version: "conformance"})
	if err != nil {
		return "", "", nil, err
	}
	// msgcontract's own protos are compiled into the runtime jar, which
	// also supplies them to protoc's -I (tools.Include).
	protos := map[string]bool{}
	set.Registry.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(fd.Path(), "google/protobuf/") && !strings.HasPrefix(fd.Path(), contracts.Prefix) {
			protos[fd.Path()] = true
		}
		return true
	})
	var protoList []string
	for p := range protos {
		protoList = append(protoList, p)
	}
	sort.Strings(protoList)
	pbSrc = filepath.Join(workDir, "pb-java")
	if err := os.MkdirAll(pbSrc, 0o755); err != nil {
		return "", "", nil, err
	}
	args := []string{}
	for _, ip := range importPaths {
		args = append(args, "-I"+ip)
	}
	args = append(args, "-I"+tools.Include, "--java_out="+pbSrc)
	features, err := protocin.Args(set, workDir)
	if err != nil {
		return "", "", nil, err
	}
	args = append(args, features...)
	if err := run(ctx, tools.Protoc, append(args, protoList...)...); err != nil {
		return "", "", nil, err
	}
	genSrc = filepath.Join(workDir, "gen-java")
	for _, f := range files {
		if err := writeFile(filepath.Join(genSrc, filepath.FromSlash(f.Name)), f.Content); err != nil {
			return "", "", nil, err
		}
	}
	return pbSrc, genSrc, files, nil
}

// Compile generates Java for set into workDir (see Sources) and compiles
// it together with extra sources (name → content). Generated code and extra
// sources must compile cleanly under -Xlint:all -Werror; protoc's output is
// compiled in a first javac run without lint.
func (tools *Toolchain) Compile(ctx context.Context, set *model.Set, importPaths []string, workDir string, extra map[string]string) (*Build, error) {
	pbSrc, genSrc, files, err := tools.Sources(ctx, set, importPaths, workDir)
	if err != nil {
		return nil, err
	}
	b := &Build{Tools: tools, Classes: filepath.Join(workDir, "classes"), Files: files}
	if err := javac(ctx, b, pbSrc, "-nowarn"); err != nil {
		return nil, err
	}
	for name, content := range extra {
		if err := writeFile(filepath.Join(genSrc, filepath.FromSlash(name)), []byte(content)); err != nil {
			return nil, err
		}
	}
	if err := javac(ctx, b, genSrc, "-Xlint:all", "-Werror"); err != nil {
		return nil, err
	}
	return b, nil
}

// javac compiles every .java file under src into b.Classes.
func javac(ctx context.Context, b *Build, src string, flags ...string) error {
	var srcs []string
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".java") {
			srcs = append(srcs, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	argFile := filepath.Join(filepath.Dir(src), filepath.Base(src)+".args")
	if err := os.WriteFile(argFile, []byte(strings.Join(srcs, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	args := append([]string{"--release", "17", "-encoding", "UTF-8", "-d", b.Classes, "-cp", b.Classpath()}, flags...)
	return run(ctx, b.Tools.Javac, append(args, "@"+argFile)...)
}

func run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", filepath.Base(name), err, out)
	}
	return nil
}

func writeFile(p string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, content, 0o644)
}
