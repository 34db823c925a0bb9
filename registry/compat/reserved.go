package compat

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Reserved names and numbers may only grow: removing a reservation lets a
// later version reuse the number or name with another meaning, and a
// non-transitive level would then compare that version only with this one.

// span32 is an inclusive range of numbers.
type span32 struct{ from, to int64 }

func (s span32) String() string {
	if s.from == s.to {
		return fmt.Sprint(s.from)
	}
	if s.to >= math.MaxInt32 || s.to == 536870911 {
		return fmt.Sprintf("%d to max", s.from)
	}
	return fmt.Sprintf("%d to %d", s.from, s.to)
}

// uncovered returns the parts of olds that news does not cover.
func uncovered(olds, news []span32) []span32 {
	sort.Slice(news, func(i, j int) bool { return news[i].from < news[j].from })
	var out []span32
	for _, o := range olds {
		cur := o.from
		for _, n := range news {
			if n.to < cur || n.from > o.to {
				continue
			}
			if n.from > cur {
				out = append(out, span32{cur, n.from - 1})
			}
			if n.to+1 > cur {
				cur = n.to + 1
			}
			if cur > o.to {
				break
			}
		}
		if cur <= o.to {
			out = append(out, span32{cur, o.to})
		}
	}
	return out
}

func fieldSpans(rs protoreflect.FieldRanges) []span32 {
	out := make([]span32, rs.Len())
	for i := range out {
		r := rs.Get(i) // end exclusive
		out[i] = span32{int64(r[0]), int64(r[1]) - 1}
	}
	return out
}

func enumSpans(rs protoreflect.EnumRanges) []span32 {
	out := make([]span32, rs.Len())
	for i := range out {
		r := rs.Get(i) // end inclusive
		out[i] = span32{int64(r[0]), int64(r[1])}
	}
	return out
}

func joinSpans(ss []span32) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.String()
	}
	return strings.Join(parts, ", ")
}

func removedNames(o, n protoreflect.Names) []string {
	var out []string
	for i := 0; i < o.Len(); i++ {
		if name := o.Get(i); !n.Has(name) {
			out = append(out, fmt.Sprintf("%q", name))
		}
	}
	return out
}

func (c *checker) reservedFields(o, n protoreflect.MessageDescriptor) {
	c.reserved(n, "field", uncovered(fieldSpans(o.ReservedRanges()), fieldSpans(n.ReservedRanges())), removedNames(o.ReservedNames(), n.ReservedNames()))
}

func (c *checker) reservedValues(o, n protoreflect.EnumDescriptor) {
	c.reserved(n, "enum value", uncovered(enumSpans(o.ReservedRanges()), enumSpans(n.ReservedRanges())), removedNames(o.ReservedNames(), n.ReservedNames()))
}

func (c *checker) reserved(n protoreflect.Descriptor, what string, numbers []span32, names []string) {
	elem := string(n.FullName())
	if len(numbers) > 0 {
		c.report(ReservedNumberRemoved, elem, c.pos(n), "%s numbers %s of %s are no longer reserved; keep `reserved %s;` so no later %s reuses them",
			what, joinSpans(numbers), elem, joinSpans(numbers), what)
	}
	if len(names) > 0 {
		c.report(ReservedNameRemoved, elem, c.pos(n), "%s names %s of %s are no longer reserved; keep `reserved %s;` so no later %s reuses them",
			what, strings.Join(names, ", "), elem, strings.Join(names, ", "), what)
	}
}
