package python

import (
	"fmt"
	"strings"
	"unicode"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// This file is the one place where proto names become Python names. Like
// protoc's Python generator, field names are never renamed: a field named
// after a Python keyword ("from", "class") is read with getattr, as
// protobuf's own documentation prescribes. Identifiers msgcontract makes up
// (functions, constants) get a trailing underscore when they would be a
// keyword.

var keywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true,
	"async": true, "await": true, "break": true, "class": true, "continue": true, "def": true,
	"del": true, "elif": true, "else": true, "except": true, "finally": true, "for": true,
	"from": true, "global": true, "if": true, "import": true, "in": true, "is": true,
	"lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true, "raise": true,
	"return": true, "try": true, "while": true, "with": true, "yield": true,
	"print": true, // protoc's Python generator treats print as reserved too
}

// Ident escapes a name used as a Python identifier.
func Ident(name string) string {
	if keywords[name] {
		return name + "_"
	}
	return name
}

// snake turns a CamelCase proto name into snake_case: PaySuccess →
// pay_success, HTTPRequest → http_request.
func snake(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
				(i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))) {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// localName is a message's or enum's name inside its file, nested names
// joined with "_": Outer.Inner → Outer_Inner.
func localName(d protoreflect.Descriptor) string {
	name := strings.TrimPrefix(string(d.FullName()), string(d.ParentFile().Package()))
	return strings.ReplaceAll(strings.TrimPrefix(name, "."), ".", "_")
}

// FuncPrefix is the snake_case prefix of an event's or state machine's
// functions, e.g. pay_success for pay_success_biz_key.
func FuncPrefix(d protoreflect.Descriptor) string {
	return snake(localName(d))
}

// ConstName is the upper-case name of an event's or state machine's
// constant, e.g. PAY_SUCCESS.
func ConstName(d protoreflect.Descriptor) string {
	return Ident(strings.ToUpper(snake(localName(d))))
}

// ModulePath is protoc's module path for a .proto file without the _pb2
// suffix: "shop/payment/v1/payment.proto" → "shop.payment.v1.payment", with
// "-" replaced by "_" as protoc does.
func ModulePath(protoPath string) string {
	p := strings.TrimSuffix(protoPath, ".proto")
	return strings.ReplaceAll(strings.ReplaceAll(p, "-", "_"), "/", ".")
}

// OutputPath is the .py file for module path m plus suffix.
func OutputPath(m, suffix string) string {
	return strings.ReplaceAll(m, ".", "/") + suffix + ".py"
}

// pbImport is the import statement binding the file's _pb2 module to _pb.
// A module path holding a keyword cannot be written in an import
// statement; importlib loads it then, as protoc's own output does.
func pbImport(protoPath string) string {
	mod := ModulePath(protoPath) + "_pb2"
	for _, part := range strings.Split(mod, ".") {
		if keywords[part] {
			return "import importlib\n\n_pb: Any = importlib.import_module(" + String(mod) + ")"
		}
	}
	if i := strings.LastIndex(mod, "."); i >= 0 {
		return "from " + mod[:i] + " import " + mod[i+1:] + " as _pb"
	}
	return "import " + mod + " as _pb"
}

// ClassRef is the expression naming a message or enum class through the
// _pb module alias: _pb.Outer.Inner.
func ClassRef(d protoreflect.Descriptor) string {
	name := strings.TrimPrefix(string(d.FullName()), string(d.ParentFile().Package()))
	return "_pb." + strings.TrimPrefix(name, ".")
}

// attr reads field name of the message expression owner.
func attr(owner, name string) string {
	if keywords[name] {
		return "getattr(" + owner + ", " + String(name) + ")"
	}
	return owner + "." + name
}

// String returns s as a Python string literal with only printable ASCII
// inside, so generated sources are ASCII.
func String(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// docText makes s safe inside a triple-quoted docstring.
func docText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, `"""`, `\"\"\"`)
}
