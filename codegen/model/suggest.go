package model

import (
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/msgcontract/msgcontract/runtime-go/optionspb"
)

// Suggest returns the candidate closest to name by Damerau-Levenshtein
// distance (optimal string alignment: insertions, deletions,
// substitutions and swaps of two neighbours, each 1), if it is close
// enough to be a typo: at most max(1, (len(name)+1)/3) edits, compared
// without regard to case. Ties go to the earlier candidate; name itself
// and the empty string are never suggested.
func Suggest(name string, candidates []string) (string, bool) {
	limit := max(1, (len(name)+1)/3)
	best, bestD := "", limit+1
	for _, c := range candidates {
		if c == "" || c == name {
			continue
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// didYouMean is "; did you mean \"X\"?" for the closest candidate, or "".
func didYouMean(name string, candidates []string) string {
	if s, ok := Suggest(name, candidates); ok {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// editDistance is the optimal-string-alignment distance of a and b.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// d[i][j]: distance of x[:i] and y[:j]
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// valueNames lists an enum's value names.
func valueNames(ed protoreflect.EnumDescriptor) []string {
	vs := ed.Values()
	names := make([]string, vs.Len())
	for i := range names {
		names[i] = string(vs.Get(i).Name())
	}
	return names
}

var (
	// protocompile: "unknown extension msgcontract.v1.evnet"
	unknownExtension = regexp.MustCompile(`unknown extension \.?([\w.]+)$`)
	// protocompile: "option (msgcontract.v1.event): field biz_kye not found",
	// with the path of a message literal nested in the option's value
	// (".retry") after the extension's name.
	unknownOptionField = regexp.MustCompile(`option \(\.?([\w.]+)\)((?:\.\w+)*): field (\w+) not found$`)
)

// explainCompileError rewrites protocompile's messages about an unknown
// option field or extension into ones that name the message the field was
// looked up in and suggest the known name a typo is closest to, from the
// fields of msgcontract's option messages and the extensions
// msgcontract/v1/options.proto defines. Other messages are returned as
// they are.
func explainCompileError(msg string) string {
	if m := unknownExtension.FindStringSubmatchIndex(msg); m != nil {
		name := msg[m[2]:m[3]]
		exts := optionspb.File_msgcontract_v1_options_proto.Extensions()
		names := make([]string, exts.Len())
		for i := range names {
			names[i] = string(exts.Get(i).FullName())
		}
		if s, ok := Suggest(name, names); ok {
			return msg + fmt.Sprintf("; did you mean (%s)?", s)
		}
		return msg
	}
	m := unknownOptionField.FindStringSubmatchIndex(msg)
	if m == nil {
		return msg
	}
	ext, field := msg[m[2]:m[3]], msg[m[6]:m[7]]
	xd := optionspb.File_msgcontract_v1_options_proto.Extensions().ByName(protoreflect.Name(strings.TrimPrefix(ext, "msgcontract.v1.")))
	if xd == nil || string(xd.FullName()) != ext || xd.Message() == nil {
		return msg
	}
	// protocompile names the option, not the message literal nested in
	// its value the field was looked up in: the fields of every message
	// the option's value can hold are the candidates, and the message of
	// the closest one is named.
	var names []string
	owner := map[string]protoreflect.MessageDescriptor{}
	seen := map[protoreflect.FullName]bool{}
	var walk func(md protoreflect.MessageDescriptor)
	walk = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		fields := md.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			if _, dup := owner[string(fd.Name())]; !dup {
				names = append(names, string(fd.Name()))
				owner[string(fd.Name())] = md
			}
			if fd.Message() != nil {
				walk(fd.Message())
			}
		}
	}
	walk(xd.Message())
	s, ok := Suggest(field, names)
	if !ok {
		return msg
	}
	return msg[:m[6]-len("field ")] + fmt.Sprintf("unknown field %q; did you mean %q (%s.%s)?", field, s, owner[s].FullName(), s)
}
