package compat

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/codegen/model"
)

// Violation is one breaking change.
type Violation struct {
	Rule Rule
	// Element is the full name of what changed, e.g. shop.v1.Pay.amount.
	Element string
	// Pos is in the new schema: the element itself, or, when it was
	// deleted, the place it was deleted from.
	Pos     model.Pos
	Message string
	// Against is the index in the history of the version the new schema
	// was compared with (0 for Check).
	Against int
}

// String formats v as "file:line:col: RULE_ID: message".
func (v Violation) String() string {
	return fmt.Sprintf("%s: %s: %s", v.Pos, v.Rule.ID, v.Message)
}

// Check compares prev with next and returns the violations that break in
// any of dirs, sorted by position. Only the files named when each set was
// loaded (Set.Files) are compared; imports are checked where they are
// registered themselves.
func Check(prev, next *model.Set, dirs Direction) []Violation {
	if dirs == 0 {
		return nil
	}
	return check(prev, newIndex(next), dirs)
}

func check(prev *model.Set, next *index, dirs Direction) []Violation {
	c := newChecker(prev, next)
	c.packages()
	c.types()
	c.contract()
	var out []Violation
	seen := map[string]bool{}
	for _, v := range c.out {
		if v.Rule.Breaks&dirs == 0 {
			continue
		}
		key := v.String()
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, v)
	}
	sortViolations(out)
	return out
}

// CheckLevel checks next against history (oldest first) at level: against
// the latest version, or against every version for the _TRANSITIVE levels.
// Each violation's Against is the history index it was found against; a
// violation found against several versions is reported once, against the
// newest.
func CheckLevel(level Level, history []*model.Set, next *model.Set) []Violation {
	dirs := level.Directions()
	if dirs == 0 || len(history) == 0 {
		return nil
	}
	first := len(history) - 1
	if level.Transitive() {
		first = 0
	}
	var out []Violation
	seen := map[string]bool{}
	idx := newIndex(next) // built once, shared by every comparison
	for i := len(history) - 1; i >= first; i-- {
		for _, v := range check(history[i], idx, dirs) {
			if key := v.String(); !seen[key] {
				seen[key] = true
				v.Against = i
				out = append(out, v)
			}
		}
	}
	sortViolations(out)
	return out
}

func sortViolations(vs []Violation) {
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i].Pos, vs[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return vs[i].Rule.ID < vs[j].Rule.ID
	})
}

type checker struct {
	prev, next *model.Set
	nextIdx    *index
	// display maps import paths of next's files to the paths users see.
	display map[string]string
	// pkgMap maps an old package to its new name for files whose package
	// changed, so their types are still compared by name.
	pkgMap map[string]string
	// oldTypes and newTypes index messages and enums by full name.
	oldTypes, newTypes map[string]protoreflect.Descriptor
	// oldOrder keeps oldTypes in declaration order for stable output.
	oldOrder []string
	out      []Violation
}

// index is what the checker looks up in the new schema, built once per
// CheckLevel however many versions it is compared with.
type index struct {
	set     *model.Set
	display map[string]string
	types   map[string]protoreflect.Descriptor
	// fields indexes each new message's fields by number and name;
	// protoreflect's lookups scan, and a transitive check asks often.
	fields map[protoreflect.FullName]*fieldIndex
}

type fieldIndex struct {
	byNumber map[protoreflect.FieldNumber]protoreflect.FieldDescriptor
	byName   map[protoreflect.Name]protoreflect.FieldDescriptor
}

func newIndex(next *model.Set) *index {
	idx := &index{set: next, display: map[string]string{}, fields: map[protoreflect.FullName]*fieldIndex{}}
	for _, f := range next.Files {
		idx.display[f.Path] = f.DisplayPath
	}
	idx.types, _ = indexTypes(next)
	for _, d := range idx.types {
		md, ok := d.(protoreflect.MessageDescriptor)
		if !ok {
			continue
		}
		fs := md.Fields()
		fi := &fieldIndex{byNumber: make(map[protoreflect.FieldNumber]protoreflect.FieldDescriptor, fs.Len()),
			byName: make(map[protoreflect.Name]protoreflect.FieldDescriptor, fs.Len())}
		for i := 0; i < fs.Len(); i++ {
			f := fs.Get(i)
			fi.byNumber[f.Number()] = f
			fi.byName[f.Name()] = f
		}
		idx.fields[md.FullName()] = fi
	}
	return idx
}

func newChecker(prev *model.Set, next *index) *checker {
	c := &checker{prev: prev, next: next.set, nextIdx: next, display: next.display, pkgMap: map[string]string{}}
	c.oldTypes, c.oldOrder = indexTypes(prev)
	c.newTypes = next.types
	return c
}

func indexTypes(s *model.Set) (map[string]protoreflect.Descriptor, []string) {
	m := map[string]protoreflect.Descriptor{}
	var order []string
	add := func(d protoreflect.Descriptor) {
		name := string(d.FullName())
		if _, ok := m[name]; !ok {
			order = append(order, name)
		}
		m[name] = d
	}
	var walk func(ms protoreflect.MessageDescriptors, es protoreflect.EnumDescriptors)
	walk = func(ms protoreflect.MessageDescriptors, es protoreflect.EnumDescriptors) {
		for i := 0; i < es.Len(); i++ {
			add(es.Get(i))
		}
		for i := 0; i < ms.Len(); i++ {
			md := ms.Get(i)
			if md.IsMapEntry() {
				continue // compared through the map field
			}
			add(md)
			walk(md.Messages(), md.Enums())
		}
	}
	for _, f := range s.Files {
		walk(f.Desc.Messages(), f.Desc.Enums())
	}
	return m, order
}

func (c *checker) report(id string, element string, pos model.Pos, format string, args ...any) {
	c.out = append(c.out, Violation{Rule: mustRule(id), Element: element, Pos: pos, Message: fmt.Sprintf(format, args...)})
}

// pos returns d's position in the new schema, falling back to its parent's
// (map entries and other synthetic elements have none of their own).
func (c *checker) pos(d protoreflect.Descriptor) model.Pos {
	for d != nil {
		fd := d.ParentFile()
		if fd == nil {
			break
		}
		if _, isFile := d.(protoreflect.FileDescriptor); isFile {
			return c.filePos(fd)
		}
		loc := fd.SourceLocations().ByDescriptor(d)
		if loc.Path != nil {
			return model.Pos{File: c.displayPath(fd.Path()), Line: loc.StartLine + 1, Col: loc.StartColumn + 1}
		}
		d = d.Parent()
	}
	return model.Pos{}
}

// filePos is the package statement of fd, or its start.
func (c *checker) filePos(fd protoreflect.FileDescriptor) model.Pos {
	for _, path := range []protoreflect.SourcePath{{2}, {12}} { // package, syntax
		if loc := fd.SourceLocations().ByPath(path); loc.Path != nil {
			return model.Pos{File: c.displayPath(fd.Path()), Line: loc.StartLine + 1, Col: loc.StartColumn + 1}
		}
	}
	return model.Pos{File: c.displayPath(fd.Path()), Line: 1, Col: 1}
}

func (c *checker) displayPath(p string) string {
	if d, ok := c.display[p]; ok {
		return d
	}
	return p
}

// packages pairs old and new files (by path, or the only file of each) and
// reports changed packages.
func (c *checker) packages() {
	newByPath := map[string]*model.File{}
	for _, f := range c.next.Files {
		newByPath[f.Path] = f
	}
	for _, of := range c.prev.Files {
		nf := newByPath[of.Path]
		if nf == nil && len(c.prev.Files) == 1 && len(c.next.Files) == 1 {
			nf = c.next.Files[0]
		}
		if nf == nil {
			continue
		}
		op, np := of.Desc.Package(), nf.Desc.Package()
		if op == np {
			continue
		}
		c.pkgMap[string(op)] = string(np)
		c.report(PackageChanged, string(np), c.filePos(nf.Desc),
			"package changed from %q to %q; every type's full name changes with it", op, np)
	}
}

// newName maps an old full name to the name it has in the new schema.
func (c *checker) newName(old string) string {
	if old == "" {
		return ""
	}
	if _, ok := c.newTypes[old]; ok {
		return old
	}
	for op, np := range c.pkgMap {
		rest, ok := strings.CutPrefix(old, op+".")
		if op == "" {
			rest, ok = old, true
		}
		if !ok {
			continue
		}
		if np == "" {
			return rest
		}
		return np + "." + rest
	}
	return old
}

// deletedFrom is where a deleted type used to live in the new schema: its
// parent message if that survived, else the paired file.
func (c *checker) deletedFrom(old protoreflect.Descriptor) model.Pos {
	if parent, ok := old.Parent().(protoreflect.MessageDescriptor); ok {
		if np, ok := c.newTypes[c.newName(string(parent.FullName()))]; ok {
			return c.pos(np)
		}
	}
	path := old.ParentFile().Path()
	for _, f := range c.next.Files {
		if f.Path == path {
			return c.filePos(f.Desc)
		}
	}
	if len(c.next.Files) > 0 {
		return c.filePos(c.next.Files[0].Desc)
	}
	return model.Pos{}
}

func (c *checker) types() {
	for _, name := range c.oldOrder {
		od := c.oldTypes[name]
		nd, ok := c.newTypes[c.newName(name)]
		switch o := od.(type) {
		case protoreflect.MessageDescriptor:
			n, isMsg := nd.(protoreflect.MessageDescriptor)
			if !ok || !isMsg {
				c.report(MessageDeleted, name, c.deletedFrom(od), "message %s was deleted", name)
				continue
			}
			c.message(o, n)
		case protoreflect.EnumDescriptor:
			n, isEnum := nd.(protoreflect.EnumDescriptor)
			if !ok || !isEnum {
				c.report(EnumDeleted, name, c.deletedFrom(od), "enum %s was deleted", name)
				continue
			}
			c.enum(o, n)
		}
	}
}
