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

// moduleNames are the module-level names of every contract module that
// are not derived from an event or state machine.
var moduleNames = []string{
	"DEFAULT_RETRY", "RULES", "EVENTS", "STATE_MACHINES", "classify", "classify_no_code", "error",
	"annotations", "Any", "Awaitable", "Callable", "importlib", "_mc", "_mc_aio", "_mc_envelope_pb2", "_pb",
}

// itemNames are the module-level names of one event or state machine:
// the constant (PAY_SUCCESS) and function prefix (pay_success).
type itemNames struct{ Const, Func string }

// declared lists every module-level name the item declares.
func (n itemNames) declared(event bool) []string {
	if !event {
		return []string{n.Const, n.Func + "_can_transit"}
	}
	return []string{n.Const, n.Const + "_TOPIC", n.Const + "_EVENT_TYPE", n.Const + "_BIZ_KEY_TEMPLATE",
		n.Const + "_RETRY", n.Func + "_biz_key", "register_" + n.Func + "_handler_async"}
}

// names gives the file's events and state machines their module-level
// names: snake_case of the proto name, nested names joined with "_"
// (Outer.Inner → OUTER_INNER, outer_inner), then "_" appended to the base
// while any name it would declare is a keyword or is already declared by
// the module or by an earlier item. So Order.Created and OrderCreated get
// ORDER_CREATED and ORDER_CREATED_, and Payment's PAYMENT_RETRY and the
// event PaymentRetry's PAYMENT_RETRY cannot overwrite each other.
func names(events, machines []protoreflect.Descriptor) (ev, sm []itemNames) {
	taken := map[string]bool{}
	for _, n := range moduleNames {
		taken[n] = true
	}
	assign := func(d protoreflect.Descriptor, event bool) itemNames {
		base := snake(localName(d))
		for {
			n := itemNames{Const: strings.ToUpper(base), Func: base}
			free := true
			for _, name := range n.declared(event) {
				if taken[name] || keywords[name] {
					free = false
				}
			}
			if free {
				for _, name := range n.declared(event) {
					taken[name] = true
				}
				return n
			}
			base += "_"
		}
	}
	for _, d := range events {
		ev = append(ev, assign(d, true))
	}
	for _, d := range machines {
		sm = append(sm, assign(d, false))
	}
	return ev, sm
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

// pbImport is the statement binding the file's _pb2 module to _pb. A
// module path holding a keyword or a part that is no identifier (a file
// named 2fa.proto) cannot be written in an import statement; importlib
// loads it then, as protoc's own output does, and usesImportlib is true:
// the template imports importlib with the other standard modules.
func pbImport(protoPath string) (stmt string, usesImportlib bool) {
	mod := ModulePath(protoPath) + "_pb2"
	for _, part := range strings.Split(mod, ".") {
		if keywords[part] || !identifier(part) {
			return "_pb: Any = importlib.import_module(" + String(mod) + ")", true
		}
	}
	if i := strings.LastIndex(mod, "."); i >= 0 {
		return "from " + mod[:i] + " import " + mod[i+1:] + " as _pb", false
	}
	return "import " + mod + " as _pb", false
}

// ClassRef is the expression naming a message or enum class through the
// _pb module alias: _pb.Outer.Inner. protoc's Python classes keep their
// proto names, so a name that is a Python keyword (message "None" or
// "from") is reached with getattr.
func ClassRef(d protoreflect.Descriptor) string {
	name := strings.TrimPrefix(string(d.FullName()), string(d.ParentFile().Package()))
	ref := "_pb"
	for _, part := range strings.Split(strings.TrimPrefix(name, "."), ".") {
		ref = attr(ref, part)
	}
	return ref
}

// TypeRef is ClassRef for a type annotation: Any where the class can only
// be reached with getattr, which mypy cannot follow.
func TypeRef(d protoreflect.Descriptor) string {
	if ref := ClassRef(d); !strings.Contains(ref, "getattr(") {
		return ref
	}
	return "Any"
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

// docText makes one line of text safe inside a """docstring""", whatever
// it holds: backslashes and every double quote are escaped (a quote at
// either end would otherwise merge with the delimiters), and characters
// Python would reject in source or read as a line end (NUL, CR, form
// feed, other controls, U+2028/2029, a BOM) become escapes.
func docText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xfeff || !unicode.IsPrint(r) && r > 0x7f:
			if r > 0xffff {
				fmt.Fprintf(&b, `\U%08x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// newlines turns CRLF and lone CR line ends (a .proto saved on Windows)
// into LF.
func newlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// identifier reports whether s is a Python identifier (ASCII rules, which
// are what module names from .proto paths can use).
func identifier(s string) bool {
	for i, c := range s {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}
