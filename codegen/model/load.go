package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/msgcontract/msgcontract/third_party/protocompile"
	"github.com/msgcontract/msgcontract/third_party/protocompile/linker"
	"github.com/msgcontract/msgcontract/third_party/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/msgcontract/msgcontract/contracts"
	"github.com/msgcontract/msgcontract/runtime-go/optionspb"
)

// Config says where to find .proto files.
type Config struct {
	// ImportPaths are searched in order, like protoc's -I. When empty, the
	// current directory is the only import path.
	ImportPaths []string
	// Sources, when set, supplies file contents by import path before the
	// import paths are searched (the registry compiles schemas from memory).
	Sources map[string]string
	// Prebuilt resolves msgcontract/v1/options.proto, embedded or as a
	// byte-identical copy on an import path, to the descriptor compiled into
	// this binary instead of compiling it. The file then has no positions,
	// comments or AST: right for comparing contracts (`breaking`), which
	// never points into it, and saves compiling it once per Load.
	Prebuilt bool
}

// Load compiles files (paths on disk, each under one of the import paths,
// or import paths themselves) and builds the model. A file that does not
// compile yields a *CompileError listing every positioned error; contract
// rule violations are in the returned Set's Diagnostics.
func Load(ctx context.Context, cfg Config, files ...string) (*Set, error) {
	if len(files) == 0 {
		return nil, errors.New("no .proto files given")
	}
	importPaths := cfg.ImportPaths
	if len(importPaths) == 0 {
		importPaths = []string{"."}
	}
	l := &loader{importPaths: importPaths, sources: cfg.Sources, prebuilt: cfg.Prebuilt, display: map[string]string{}}
	names := make([]string, len(files))
	for i, f := range files {
		name, err := l.importName(f)
		if err != nil {
			return nil, err
		}
		names[i] = name
		l.display[name] = f
	}
	comp := protocompile.Compiler{
		Resolver:       protocompile.WithStandardImports(protocompile.ResolverFunc(l.find)),
		SourceInfoMode: protocompile.SourceInfoStandard | protocompile.SourceInfoExtraComments,
		RetainASTs:     true,
		Reporter:       reporter.NewReporter(l.report, nil),
	}
	compiled, err := comp.Compile(ctx, names...)
	if compileErrs := l.finish(); len(compileErrs) > 0 {
		return nil, &CompileError{Errors: compileErrs}
	}
	if err != nil {
		var ep reporter.ErrorWithPos
		if errors.As(err, &ep) {
			return nil, &CompileError{Errors: []string{l.positioned(ep)}}
		}
		return nil, &CompileError{Errors: []string{err.Error()}}
	}
	fds := make([]protoreflect.FileDescriptor, len(compiled))
	for i, f := range compiled {
		fds[i] = f
	}
	return l.build(fds)
}

// A loader is shared by the goroutines protocompile compiles files in: it
// calls find for every import from the goroutine of the importing file, and
// report from whichever goroutine found the error (serialized among
// reports, not with find). Compile can also return while some of them are
// still running: it gives up on a file at the first failed import it waits
// for, and its goroutines stop at their next phase. So display and errs are
// guarded by mu, and finish closes the loader to late callers.
type loader struct {
	importPaths []string
	sources     map[string]string
	prebuilt    bool

	mu sync.Mutex
	// display maps import names to the paths users know the files by.
	display map[string]string
	// errs holds the positioned compile errors reported so far.
	errs []string
	// done is set by finish: display and errs change no more.
	done bool
}

// errLoadFinished aborts, in protocompile's goroutines that outlive
// Compile, any work that would report another error.
var errLoadFinished = errors.New("model: load finished")

// report is the compiler's error reporter.
func (l *loader) report(err reporter.ErrorWithPos) error {
	msg := l.positioned(err)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return errLoadFinished
	}
	l.errs = append(l.errs, msg)
	return nil // keep going: report every error, not only the first
}

// finish returns the errors reported so far and freezes display and errs
// against goroutines of the compiler still running.
func (l *loader) finish() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done = true
	return l.errs
}

// noteDisplay remembers the path on disk an import was found at, unless
// the file was named by a path of its own.
func (l *loader) noteDisplay(name, full string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.display[name]; !ok && !l.done {
		l.display[name] = full
	}
}

// importName turns a path on disk into its name relative to an import
// path, as protoc does.
func (l *loader) importName(file string) (string, error) {
	if _, ok := l.sources[file]; ok {
		return file, nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	for _, ip := range l.importPaths {
		ipAbs, err := filepath.Abs(ip)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(ipAbs, abs)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			if _, err := os.Stat(abs); err != nil {
				return "", fmt.Errorf("%s: %w", file, err)
			}
			return filepath.ToSlash(rel), nil
		}
	}
	return "", fmt.Errorf("%s: file is not under any import path (%s); add -I with the directory its imports are relative to",
		file, strings.Join(l.importPaths, ", "))
}

// find resolves an import: in-memory sources, then the import paths, then
// msgcontract's own embedded protos.
func (l *loader) find(path string) (protocompile.SearchResult, error) {
	if src, ok := l.sources[path]; ok {
		return protocompile.SearchResult{Source: strings.NewReader(src)}, nil
	}
	for _, ip := range l.importPaths {
		full := filepath.Join(ip, filepath.FromSlash(path))
		f, err := os.Open(full)
		if err == nil {
			l.noteDisplay(path, full)
			if l.prebuilt && path == contracts.OptionsPath {
				return prebuiltOptions(f)
			}
			return protocompile.SearchResult{Source: f}, nil
		}
	}
	if l.prebuilt && path == contracts.OptionsPath {
		return protocompile.SearchResult{Desc: optionspb.File_msgcontract_v1_options_proto}, nil
	}
	if rc, err := contracts.Open(path); err == nil {
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return protocompile.SearchResult{}, err
		}
		return protocompile.SearchResult{Source: strings.NewReader(string(b))}, nil
	}
	return protocompile.SearchResult{}, fs.ErrNotExist
}

// prebuiltOptions resolves a copy of options.proto on an import path: to
// the compiled-in descriptor when it is byte for byte the embedded source
// the descriptor was generated from, else to its own text.
func prebuiltOptions(f *os.File) (protocompile.SearchResult, error) {
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return protocompile.SearchResult{}, err
	}
	if own, err := contracts.Source(contracts.OptionsPath); err == nil && bytes.Equal(b, own) {
		return protocompile.SearchResult{Desc: optionspb.File_msgcontract_v1_options_proto}, nil
	}
	return protocompile.SearchResult{Source: bytes.NewReader(b)}, nil
}

func (l *loader) positioned(err reporter.ErrorWithPos) string {
	pos := err.GetPosition()
	p := Pos{File: l.displayPath(pos.Filename), Line: pos.Line, Col: pos.Col}
	msg := explainCompileError(err.Unwrap().Error())
	if errors.Is(err, fs.ErrNotExist) {
		msg += fmt.Sprintf(" in import paths %s; add -I with the directory the import is relative to", strings.Join(l.importPaths, ", "))
	}
	return fmt.Sprintf("%s: %s", p, msg)
}

// Builtin reports whether the import path is a well-known type or one of
// msgcontract's own protos, which declare no contracts.
func Builtin(path string) bool {
	return strings.HasPrefix(path, "google/protobuf/") || strings.HasPrefix(path, "msgcontract/v1/")
}

func (l *loader) displayPath(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d, ok := l.display[name]; ok {
		return d
	}
	return name
}

// FromFiles builds the model from already-compiled descriptors, as the
// protoc plugin receives them. Diagnostics then carry no line and column.
func FromFiles(files ...protoreflect.FileDescriptor) (*Set, error) {
	l := &loader{display: map[string]string{}}
	return l.build(files)
}

// build reads the options of every compiled file.
func (l *loader) build(compiled []protoreflect.FileDescriptor) (*Set, error) {
	l.finish() // display is complete; the Set keeps it
	set := &Set{Registry: &protoregistry.Files{}, displayPaths: l.display}
	var register func(fd protoreflect.FileDescriptor) error
	register = func(fd protoreflect.FileDescriptor) error {
		if _, err := set.Registry.FindFileByPath(fd.Path()); err == nil {
			return nil
		}
		for _, imps := range []protoreflect.FileImports{fd.Imports(), optionImports(fd)} {
			for i := 0; i < imps.Len(); i++ {
				if err := register(imps.Get(i).FileDescriptor); err != nil {
					return err
				}
			}
		}
		return set.Registry.RegisterFile(fd)
	}
	for _, f := range compiled {
		if err := register(f); err != nil {
			return nil, err
		}
	}
	b := &builder{set: set}
	named := map[string]bool{}
	for _, f := range compiled {
		res, _ := f.(linker.Result)
		set.Files = append(set.Files, b.file(f, res, l.displayPath(f.Path())))
		named[f.Path()] = true
	}
	// Imported files are modelled too, so that a target_state may name a
	// state machine declared in another file, as a monorepo build that
	// generates one package at a time (protoc, buf, Bazel) requires. Their
	// own rule violations are reported when they are linted themselves.
	set.Registry.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !named[fd.Path()] && !Builtin(fd.Path()) {
			res, _ := fd.(linker.Result)
			ib := &builder{set: set}
			set.imported = append(set.imported, ib.file(fd, res, l.displayPath(fd.Path())))
		}
		return true
	})
	b.resolveTargets()
	for i := range b.diags {
		b.diags[i].Pos.File = l.displayPath(b.diags[i].Pos.File)
	}
	b.diags.Sort()
	set.Diagnostics = b.diags
	for _, f := range set.Files {
		// Events share the file's range slice, so this maps theirs too.
		for i := range f.Defaults.Rules.Ranges {
			rg := &f.Defaults.Rules.Ranges[i]
			rg.Pos.File = l.displayPath(rg.Pos.File)
		}
		for _, e := range f.Events {
			e.Pos.File = l.displayPath(e.Pos.File)
			for k, p := range e.OptionPos {
				p.File = l.displayPath(p.File)
				e.OptionPos[k] = p
			}
		}
		for _, sm := range f.StateMachines {
			sm.Pos.File = l.displayPath(sm.Pos.File)
			for _, s := range sm.States {
				s.Pos.File = l.displayPath(s.Pos.File)
			}
		}
	}
	return set, nil
}
