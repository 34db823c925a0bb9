// Package golang builds generated Go: it writes protoc-gen-go's and
// msgcontract's code for a contract set into a throwaway Go module that
// depends only on runtime-go, and builds and runs programs in it with the go
// command. The Go conformance executor and the Go generator's end-to-end
// test add their programs to such a module.
package golang

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/golang/pbgo"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// ModulePath is the module path of generated modules. Generated packages
// live under ModulePath/gen/<the .proto's directory>.
const ModulePath = "msgcontract.test/conformance"

const runtimeModule = "github.com/msgcontract/msgcontract/runtime-go"

// Module is a generated Go module.
type Module struct {
	Dir string
	// Set is the contract model of the relocated files: its descriptors
	// carry the go_package the code was generated with.
	Set *model.Set
}

// WriteModule writes a Go module into dir (created if needed) holding, for
// the contract files of set and every file they import except the
// well-known types and msgcontract's envelope, protoc-gen-go's code and
// msgcontract's. Each file's go_package is replaced by
// ModulePath/gen/<dir of the .proto>, so vector protos need no particular
// go_package. go.mod requires runtime-go, replaced by runtimeDir; go.sum
// is seeded from runtime-go's so the go command needs the network only for
// modules missing from the module cache.
func WriteModule(set *model.Set, runtimeDir, dir string) (*Module, error) {
	moved, err := relocate(set)
	if err != nil {
		return nil, err
	}
	var all []protoreflect.FileDescriptor
	moved.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if relocated(fd.Path()) {
			all = append(all, fd)
		}
		return true
	})
	pb, err := pbgo.Generate(emit.Params{Module: ModulePath}, all...)
	if err != nil {
		return nil, err
	}
	for _, f := range pb {
		if err := emit.WriteFile(dir, f); err != nil {
			return nil, err
		}
	}
	var contracts []protoreflect.FileDescriptor
	for _, f := range set.Files {
		fd, err := moved.FindFileByPath(f.Path)
		if err != nil {
			return nil, err
		}
		contracts = append(contracts, fd)
	}
	mset, err := model.FromFiles(contracts...)
	if err != nil {
		return nil, err
	}
	files, err := generate.Run(mset, emit.Params{Lang: "go", Module: ModulePath, Version: "conformance"})
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := write(filepath.Join(dir, filepath.FromSlash(f.Name)), f.Content); err != nil {
			return nil, err
		}
	}
	if err := writeGoMod(runtimeDir, dir); err != nil {
		return nil, err
	}
	return &Module{Dir: dir, Set: mset}, nil
}

// relocated reports whether a file's code is generated into the module.
func relocated(path string) bool {
	return !strings.HasPrefix(path, "google/protobuf/") && path != "msgcontract/v1/envelope.proto"
}

// GoPackage is the Go import path and package name a .proto file is
// relocated to: ModulePath/gen/<dir of the .proto>, and the package name
// of goPackage (the file's go_package option) when it names one, else one
// derived from the directory.
func GoPackage(protoPath, goPackage string) (importPath, name string) {
	dir := path.Dir(protoPath)
	importPath = ModulePath + "/gen"
	if dir != "." {
		importPath += "/" + dir
	}
	if _, n, ok := strings.Cut(goPackage, ";"); ok && n != "" {
		return importPath, n
	}
	var b strings.Builder
	for _, r := range strings.ToLower(path.Base(importPath)) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			b.WriteRune(r)
		}
	}
	name = b.String()
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "pkg" + name
	}
	return importPath, name
}

// relocate rebuilds every file of set's registry with go_package pointing
// into the module.
func relocate(set *model.Set) (*protoregistry.Files, error) {
	fdset := &descriptorpb.FileDescriptorSet{}
	for _, fd := range pbgo.WithImports(set.Descriptors()...) {
		fdp := protodesc.ToFileDescriptorProto(fd)
		if relocated(fd.Path()) {
			if fdp.Options == nil {
				fdp.Options = &descriptorpb.FileOptions{}
			}
			ip, name := GoPackage(fd.Path(), fdp.GetOptions().GetGoPackage())
			fdp.Options.GoPackage = proto.String(ip + ";" + name)
		}
		fdset.File = append(fdset.File, fdp)
	}
	return protodesc.NewFiles(fdset)
}

func writeGoMod(runtimeDir, dir string) error {
	abs, err := filepath.Abs(runtimeDir)
	if err != nil {
		return err
	}
	mod := fmt.Sprintf(`module %s

go 1.26

require %s v0.0.0

replace %s => %s
`, ModulePath, runtimeModule, runtimeModule, filepath.ToSlash(abs))
	if err := write(filepath.Join(dir, "go.mod"), []byte(mod)); err != nil {
		return err
	}
	sum, err := os.ReadFile(filepath.Join(abs, "go.sum"))
	if err != nil {
		return fmt.Errorf("seeding go.sum: %w", err)
	}
	return write(filepath.Join(dir, "go.sum"), sum)
}

func write(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, content, 0o644)
}

// RuntimeDir finds runtime-go: MSGCONTRACT_RUNTIME_GO when set, else the
// runtime-go folder of the first directory at or above the working
// directory that holds one with a go.mod.
func RuntimeDir() (string, error) {
	if d := os.Getenv("MSGCONTRACT_RUNTIME_GO"); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "runtime-go", "go.mod")); err == nil {
			return filepath.Join(d, "runtime-go"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("runtime-go not found at or above %s; set MSGCONTRACT_RUNTIME_GO to its directory", wd)
		}
	}
}

// Run builds the main package pkg of the module and runs it with stdin,
// returning its standard output. The go command runs with -mod=mod (so
// go.mod gains the requirements the generated code needs) and no
// workspace.
func (m *Module) Run(ctx context.Context, pkg string, stdin []byte) ([]byte, error) {
	exe := filepath.Join(m.Dir, "bin", filepath.Base(pkg))
	if out, err := m.Go(ctx, "build", "-o", exe, pkg); err != nil {
		return nil, fmt.Errorf("go build %s in %s: %v\n%s", pkg, m.Dir, err, out)
	}
	run := exec.CommandContext(ctx, exe)
	run.Dir = m.Dir
	run.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v\n%s%s", pkg, err, stdout.String(), stderr.String())
	}
	return stdout.Bytes(), nil
}

// Go runs the go command with args in the module, as Run builds.
func (m *Module) Go(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = m.Dir
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod"), "GOWORK=off")
	return cmd.CombinedOutput()
}
