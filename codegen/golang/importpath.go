package golang

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/golang/pbgo"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// ImportPath is the Go import path protoc-gen-go gives the .proto at path
// whose go_package option is goPackage: p's M mapping of it, else the
// import path of go_package ("example.com/a;apb" gives "example.com/a");
// "" when neither gives one.
func ImportPath(p emit.Params, path, goPackage string) string {
	if m, ok := p.GoImportPaths[path]; ok {
		goPackage = m
	}
	importPath, _, _ := strings.Cut(goPackage, ";")
	return importPath
}

// importPathOf is ImportPath of a compiled file.
func importPathOf(p emit.Params, fd protoreflect.FileDescriptor) string {
	opts, _ := fd.Options().(*descriptorpb.FileOptions)
	return ImportPath(p, fd.Path(), opts.GetGoPackage())
}

// ImportPathError is a file Go output needs without a Go import path
// (protoc-gen-go's "unable to determine Go import path"): a file with Go
// output, or one such a file imports.
type ImportPathError struct {
	// File is the .proto without a Go import path.
	File string
	// ImportedBy, when File has no Go output itself, is a file with Go
	// output that imports it, directly or not.
	ImportedBy string
}

func (e *ImportPathError) Error() string {
	if e.ImportedBy != "" {
		return fmt.Sprintf("%s has no Go import path (no go_package option, no M mapping), and %s, which has Go output, imports it", e.File, e.ImportedBy)
	}
	return fmt.Sprintf("%s has no Go import path (no go_package option, no M mapping)", e.File)
}

// MissingImportPath returns an *ImportPathError for the first file of
// files, or of their imports, without a Go import path for p, or nil when
// all of them have one.
func MissingImportPath(p emit.Params, files ...protoreflect.FileDescriptor) error {
	for _, fd := range files {
		if importPathOf(p, fd) == "" {
			return &ImportPathError{File: fd.Path()}
		}
	}
	for _, fd := range files {
		for _, dep := range pbgo.WithImports(fd) {
			if importPathOf(p, dep) == "" {
				return &ImportPathError{File: dep.Path(), ImportedBy: fd.Path()}
			}
		}
	}
	return nil
}

// goFiles are the files of set protogen's view names to generate: all
// but those without Go output (no events, no state machines) and without
// a Go import path, which protoc-gen-go could not place and this
// generator has nothing to place, as protoc-gen-msgcontract leaves them
// out. (A file left out that a file with Go output imports still needs an
// import path, as it does for protoc-gen-go.)
func goFiles(set *model.Set, p emit.Params) []protoreflect.FileDescriptor {
	fds := make([]protoreflect.FileDescriptor, 0, len(set.Files))
	for _, f := range set.Files {
		if f.HasContract() || importPathOf(p, f.Desc) != "" {
			fds = append(fds, f.Desc)
		}
	}
	return fds
}
