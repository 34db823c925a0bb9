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
	// Pos is where the element lives: in the new schema, or, for a message,
	// enum, service or RPC deleted with its parent or file, in the version
	// it was deleted from (then Previous is true). A deleted field or enum
	// value points at the message or enum it was deleted from, where the
	// reservation belongs.
	Pos      model.Pos
	Previous bool
	Message  string
	// Against is the index in the history of the version the new schema
	// was compared with (0 for Check).
	Against int
}

// String formats v as "file:line:col: RULE_ID: message".
func (v Violation) String() string {
	return fmt.Sprintf("%s: %s: %s", v.Pos, v.Rule.ID, v.Message)
}

// Option adjusts a check.
type Option func(*options)

type options struct{ extra Direction }

// WithSource also reports the CODE rules: changes no reader or writer
// notices at run time but that break code generated from the old version
// (a field moved into a oneof, a changed jstype, a deleted enum). No level
// includes them; `msgcontract breaking --code` asks for them.
func WithSource() Option { return func(o *options) { o.extra |= Source } }

// Check compares prev with next and returns the violations that break in
// any of dirs, sorted by position.
func Check(prev, next *model.Set, dirs Direction) []Violation {
	if dirs == 0 {
		return nil
	}
	return check(Prepare(prev), Prepare(next), dirs)
}

// CheckPrepared is Check over prepared schemas: with PrepareClosure's,
// the definitions both import are compared too.
func CheckPrepared(prev, next *Schema, dirs Direction) []Violation {
	if dirs == 0 {
		return nil
	}
	return check(prev, next, dirs)
}

// CheckLevel checks next against history (oldest first) at level: against
// the latest version, or against every version for the _TRANSITIVE levels.
// It prepares every set; a caller that checks many times against the same
// versions keeps their Schemas and calls CheckSchemas.
func CheckLevel(level Level, history []*model.Set, next *model.Set, opts ...Option) []Violation {
	if level.Directions() == 0 || len(history) == 0 {
		return nil
	}
	hist := make([]*Schema, len(history))
	first := len(history) - 1
	if level.Transitive() {
		first = 0
	}
	for i := first; i < len(history); i++ {
		hist[i] = Prepare(history[i])
	}
	return CheckSchemas(level, hist, Prepare(next), opts...)
}

// CheckSchemas checks next against history (oldest first) at level, like
// CheckLevel, over prepared schemas. Only the versions the level compares
// with are read: the latest, or every one for a _TRANSITIVE level (the
// others may be nil). Each violation's Against is the history index it was
// found against; a violation found against several versions is reported
// once, against the newest.
func CheckSchemas(level Level, history []*Schema, next *Schema, opts ...Option) []Violation {
	return checkHistory(level, len(history), func(i int, dirs Direction) []Violation {
		return check(history[i], next, dirs)
	}, opts)
}

// checkHistory is CheckSchemas over n versions, with pair(i, dirs) the
// violations of the new schema against version i.
func checkHistory(level Level, n int, pair func(i int, dirs Direction) []Violation, opts []Option) []Violation {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	dirs := level.Directions()
	if dirs == 0 || n == 0 {
		return nil
	}
	dirs |= o.extra
	first := n - 1
	if level.Transitive() {
		first = 0
	}
	var out []Violation
	seen := map[string]bool{}
	for i := n - 1; i >= first; i-- {
		for _, v := range pair(i, dirs) {
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

func check(prev, next *Schema, dirs Direction) []Violation {
	c := &checker{prev: prev, next: next, pkgMap: map[string]string{}}
	c.packages()
	c.types()
	c.services()
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
	prev, next *Schema
	// pkgMap maps an old package to its new name for files whose package
	// changed, so their types are still compared by name.
	pkgMap map[string]string
	out    []Violation
}

func (c *checker) report(id string, element string, pos model.Pos, format string, args ...any) {
	c.out = append(c.out, Violation{Rule: mustRule(id), Element: element, Pos: pos, Message: fmt.Sprintf(format, args...)})
}

// reportPrev reports an element that no longer exists, at its position in
// the previous version.
func (c *checker) reportPrev(id string, old protoreflect.Descriptor, format string, args ...any) {
	c.out = append(c.out, Violation{Rule: mustRule(id), Element: string(old.FullName()), Pos: c.prev.pos(old), Previous: true,
		Message: fmt.Sprintf(format, args...)})
}

// pos is d's position in the new schema.
func (c *checker) pos(d protoreflect.Descriptor) model.Pos { return c.next.pos(d) }

// packages pairs old and new files (by path, or the only file of each) and
// reports changed packages.
func (c *checker) packages() {
	newByPath := map[string]*model.File{}
	for _, f := range c.next.set.Files {
		newByPath[f.Path] = f
	}
	for _, of := range c.prev.set.Files {
		nf := newByPath[of.Path]
		if nf == nil && len(c.prev.set.Files) == 1 && len(c.next.set.Files) == 1 {
			nf = c.next.set.Files[0]
		}
		if nf == nil {
			continue
		}
		op, np := of.Desc.Package(), nf.Desc.Package()
		if op == np {
			continue
		}
		c.pkgMap[string(op)] = string(np)
		c.report(PackageChanged, string(np), c.next.filePos(nf.Desc),
			"package changed from %q to %q; every type's full name changes with it", op, np)
	}
}

// newName maps an old full name to the name it has in the new schema.
func (c *checker) newName(old string) string {
	if old == "" {
		return ""
	}
	if _, ok := c.next.types[old]; ok {
		return old
	}
	if _, ok := c.next.services[old]; ok {
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

func (c *checker) types() {
	for _, name := range c.prev.order {
		od := c.prev.types[name]
		nd, ok := c.next.types[c.newName(name)]
		if !ok && c.prev.imported[name] {
			continue // no longer imported: see Schema.imported
		}
		switch o := od.(type) {
		case protoreflect.MessageDescriptor:
			n, isMsg := nd.(protoreflect.MessageDescriptor)
			if !ok || !isMsg {
				c.reportPrev(MessageDeleted, od, "message %s was deleted; subjects and fields naming it no longer resolve", name)
				continue
			}
			c.message(o, n)
		case protoreflect.EnumDescriptor:
			n, isEnum := nd.(protoreflect.EnumDescriptor)
			if !ok || !isEnum {
				c.reportPrev(EnumDeleted, od, "enum %s was deleted; code naming it no longer compiles", name)
				continue
			}
			c.enum(o, n)
		}
	}
}
