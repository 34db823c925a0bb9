package compat

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// Schema is one compiled version prepared for comparison: its messages,
// enums, fields and services indexed once. A registry keeps the Schema of
// each stored version and compares a new one against them with
// CheckSchemas, without recompiling or re-indexing the history. A Schema
// is read-only once prepared and safe for concurrent checks.
type Schema struct {
	set *model.Set
	// display maps import paths to the paths users see.
	display map[string]string
	// types indexes messages and enums by full name; order keeps them in
	// declaration order for stable output.
	types map[string]protoreflect.Descriptor
	order []string
	// fields indexes each message's fields by number and name;
	// protoreflect's lookups scan, and a transitive check asks often.
	fields map[protoreflect.FullName]*fieldIndex
	// services indexes services by full name, in declaration order.
	services map[string]protoreflect.ServiceDescriptor
	svcOrder []string
	// imported marks the types indexed from the files the set's own
	// files import (PrepareClosure): compared where both versions have
	// them, never reported deleted (a version that stops importing a
	// file breaks, if at all, at the fields that named its types).
	imported map[string]bool
}

type fieldIndex struct {
	byNumber map[protoreflect.FieldNumber]protoreflect.FieldDescriptor
	byName   map[protoreflect.Name]protoreflect.FieldDescriptor
}

// Prepare indexes a loaded set (model.Load, or the registry's
// schema.Parse) for comparison. Only the set's own files (Set.Files) are
// compared; imports are checked where they are registered themselves.
func Prepare(set *model.Set) *Schema {
	s := &Schema{set: set, display: map[string]string{}, types: map[string]protoreflect.Descriptor{},
		fields: map[protoreflect.FullName]*fieldIndex{}, services: map[string]protoreflect.ServiceDescriptor{}}
	for _, f := range set.Files {
		s.display[f.Path] = f.DisplayPath
		s.walk(f.Desc.Messages(), f.Desc.Enums())
		svcs := f.Desc.Services()
		for i := 0; i < svcs.Len(); i++ {
			sd := svcs.Get(i)
			name := string(sd.FullName())
			if _, dup := s.services[name]; !dup {
				s.svcOrder = append(s.svcOrder, name)
			}
			s.services[name] = sd
		}
	}
	return s
}

// PrepareClosure is Prepare over the resolved closure of the set's own
// files: the messages and enums of every file they import, directly or
// not, are indexed too, as this version sees them. A registry compares
// closures, because a subject's schema pins the versions of the
// references it imports: a field of type dep.Hint means Hint as the
// pinned version of dep defines it, and a new version that imports a
// changed Hint changes what the subject's records carry. The built-in
// files (well-known types, msgcontract's own) are the same in every
// version and are skipped.
func PrepareClosure(set *model.Set) *Schema {
	s := Prepare(set)
	own := map[string]bool{}
	for _, f := range set.Files {
		own[f.Path] = true
	}
	seen := map[string]bool{}
	var visit func(fd protoreflect.FileDescriptor)
	visit = func(fd protoreflect.FileDescriptor) {
		imps := fd.Imports()
		for i := 0; i < imps.Len(); i++ {
			imp := imps.Get(i).FileDescriptor
			p := imp.Path()
			if seen[p] || own[p] || model.Builtin(p) {
				continue
			}
			seen[p] = true
			before := len(s.order)
			s.walk(imp.Messages(), imp.Enums())
			for _, name := range s.order[before:] {
				if s.imported == nil {
					s.imported = map[string]bool{}
				}
				s.imported[name] = true
			}
			visit(imp)
		}
	}
	for _, f := range set.Files {
		visit(f.Desc)
	}
	return s
}

// FromDescriptors prepares already-compiled files (from a
// FileDescriptorSet, a protoc plugin request or a cache) without
// compiling anything. Positions are reported when the descriptors carry
// source info.
func FromDescriptors(files ...protoreflect.FileDescriptor) (*Schema, error) {
	set, err := model.FromFiles(files...)
	if err != nil {
		return nil, err
	}
	return Prepare(set), nil
}

// Set returns the loaded set s was prepared from.
func (s *Schema) Set() *model.Set { return s.set }

func (s *Schema) add(d protoreflect.Descriptor) {
	name := string(d.FullName())
	if _, ok := s.types[name]; !ok {
		s.order = append(s.order, name)
	}
	s.types[name] = d
}

func (s *Schema) walk(ms protoreflect.MessageDescriptors, es protoreflect.EnumDescriptors) {
	for i := 0; i < es.Len(); i++ {
		s.add(es.Get(i))
	}
	for i := 0; i < ms.Len(); i++ {
		md := ms.Get(i)
		if md.IsMapEntry() {
			continue // compared through the map field
		}
		s.add(md)
		fs := md.Fields()
		fi := &fieldIndex{byNumber: make(map[protoreflect.FieldNumber]protoreflect.FieldDescriptor, fs.Len()),
			byName: make(map[protoreflect.Name]protoreflect.FieldDescriptor, fs.Len())}
		for j := 0; j < fs.Len(); j++ {
			f := fs.Get(j)
			fi.byNumber[f.Number()] = f
			fi.byName[f.Name()] = f
		}
		s.fields[md.FullName()] = fi
		s.walk(md.Messages(), md.Enums())
	}
}

// pos returns d's position in s, falling back to its parent's (map
// entries and other synthetic elements have none of their own).
func (s *Schema) pos(d protoreflect.Descriptor) model.Pos {
	for d != nil {
		fd := d.ParentFile()
		if fd == nil {
			break
		}
		if _, isFile := d.(protoreflect.FileDescriptor); isFile {
			return s.filePos(fd)
		}
		loc := fd.SourceLocations().ByDescriptor(d)
		if loc.Path != nil {
			return model.Pos{File: s.displayPath(fd.Path()), Line: loc.StartLine + 1, Col: loc.StartColumn + 1}
		}
		d = d.Parent()
	}
	return model.Pos{}
}

// filePos is the package statement of fd, or its syntax line, or its
// start.
func (s *Schema) filePos(fd protoreflect.FileDescriptor) model.Pos {
	for _, path := range []protoreflect.SourcePath{{2}, {12}} { // package, syntax
		if loc := fd.SourceLocations().ByPath(path); loc.Path != nil {
			return model.Pos{File: s.displayPath(fd.Path()), Line: loc.StartLine + 1, Col: loc.StartColumn + 1}
		}
	}
	return model.Pos{File: s.displayPath(fd.Path()), Line: 1, Col: 1}
}

func (s *Schema) displayPath(p string) string {
	if d, ok := s.display[p]; ok && d != "" {
		return d
	}
	return p
}
