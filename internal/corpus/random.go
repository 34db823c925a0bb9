package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Pools the random contracts draw names and text from: keywords of every
// target language, support and module names, names that flatten alike,
// and text that is hard to escape.
var (
	fieldNames = []string{"id", "order_id", "class", "from", "func", "type", "range", "default",
		"import", "lambda", "new", "int", "select", "string", "biz_key", "serialized_size", "x9_y",
		"chan", "print", "name", "value", "descriptor"}
	messageNames = []string{"Order", "OrderCreated", "Payment", "PaymentRetry", "Rules", "Events",
		"Classification", "Transit", "Registry", "String", "Map", "List", "Default", "Error", "Any",
		"Version", "EventSpec", "Paid"}
	nasty = []string{`"quoted"`, `ends with a quote"`, `back\slash \u000a \u002a/`, `*/ /* """ '''`,
		"${x} #{y} %s @param <b>&amp;", "中文 😀 Ω", "tab\there", "", "plain"}
	rangeNames = []string{"business", "system", "a", "A", "a1", "a-1", "ü", "type", "", "5xx", "\"q\""}

	// commentWords are what random comment lines are made of: text each
	// target language's comments, docstrings and Javadoc must carry as it
	// is (quotes, backslashes that are escapes elsewhere, closers and
	// openers, the markup of gofmt's doc comments and of Javadoc,
	// characters Python or JavaScript read as line ends, controls).
	commentWords = []string{"plain", "words", "order", `"quoted"`, `"`, `'''`, `"""`, `\`, `back\slash`,
		`\u000a`, `\u002a/`, `\u`, `\N{DASH}`, `\x41`, `C:\users\x64`, `\'`, "*/", "/*", "/**", "**/", "* /",
		"*", "/", "//", "#", "${x}", "#{y}", "%s", "%d", "@param", "@deprecated", "@Override", "{@code x}",
		"{@link Y}", "<b>&amp;</b>", "<!--", "[link]", "[Doc.Link]", "``", "''", "TODO:", "go:generate",
		"1.", "-", "+", "中文", "😀", "Ω", "ü", "ẞ", "e\u0301", "\u2028", "\u2029", "\u0085", "\u00a0", "\u200b",
		"\u3000", "\u202e", "\t", "\v", "\f", "\x7f", "type: ignore", "-*- coding: latin-1 -*-", "noqa"}
	// commentIndents start random comment lines: the spaces, tabs, stars
	// and list markers gofmt reformats in doc comments.
	commentIndents = []string{"", "", "", " ", "  ", "   ", "    ", "\t", "\t\t", " \t", "*", " * ", "** ",
		"- ", "+ ", "1. ", "2) ", "# ", "• ", "\u00a0"}
	// commentEnds end them: trailing spaces and tabs, stars, a backslash.
	commentEnds = []string{"", "", "", " ", "  ", "\t", " *", "*", `\`, ".", "\u00a0"}
	// nameParts build random identifiers beyond the pools: acronyms,
	// keywords of the target languages and digits.
	nameParts = []string{"id", "ID", "http", "HTTP", "url", "x", "v2", "2", "class", "type", "go", "java",
		"py", "proto", "event", "spec", "key", "new", "self", "this", "None", "nil", "str", "int", "Int",
		"list", "map"}
)

// Random writes n random contracts (import path → source) from seed. Each
// is meant to be valid; the property test lints them and builds those lint
// accepts.
func Random(seed uint64, n int) map[string]string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := map[string]string{}
	for i := 0; i < n; i++ {
		g := &gen{r: r, pkg: fmt.Sprintf("prop.p%d.v1", i), index: i}
		path := fmt.Sprintf("prop/p%d/v1/%s.proto", i, pick(r, []string{"contract", "order-events", "payment", "x"}))
		out[path] = g.file(path)
	}
	return out
}

type gen struct {
	r    *rand.Rand
	pkg  string
	b    strings.Builder
	used map[string]bool
	// syntax is "proto2", "proto3" or "editions".
	syntax string
	// index numbers the file among the set's, for names that must differ
	// between files (Java outer classes in a shared Java package).
	index int
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func (g *gen) line(format string, args ...any) { fmt.Fprintf(&g.b, format+"\n", args...) }

// comment writes, two times in three, a leading comment at indent: a
// nasty text or random comment text (randomComment).
func (g *gen) comment(indent string) {
	if g.r.IntN(3) == 0 {
		return
	}
	if g.r.IntN(3) == 0 {
		for _, l := range strings.Split(pick(g.r, nasty), "\n") {
			g.line("%s// %s", indent, l)
		}
		return
	}
	g.randomComment(indent)
}

// commentLines is random comment text: one to five lines of words from
// commentWords, each started by one of commentIndents and ended by one of
// commentEnds, some lines empty or only blanks.
func (g *gen) commentLines() []string {
	var lines []string
	for i, n := 0, 1+g.r.IntN(5); i < n; i++ {
		switch g.r.IntN(8) {
		case 0:
			lines = append(lines, "")
			continue
		case 1:
			lines = append(lines, pick(g.r, []string{" ", "  ", "\t", " \t "}))
			continue
		}
		var words []string
		for j, m := 0, 1+g.r.IntN(6); j < m; j++ {
			words = append(words, pick(g.r, commentWords))
		}
		sep := pick(g.r, []string{" ", " ", "", "  ", "\t"})
		lines = append(lines, pick(g.r, commentIndents)+strings.Join(words, sep)+pick(g.r, commentEnds))
	}
	return lines
}

// inBlock makes text safe inside /* */: no closer, and no opener, which
// protoc refuses ("Block comments cannot be nested"); nor a slash at
// either end, which would make one with the delimiters.
func inBlock(text string) string {
	for strings.Contains(text, "*/") || strings.Contains(text, "/*") {
		text = strings.NewReplacer("*/", "* /", "/*", "/ *").Replace(text)
	}
	if strings.HasSuffix(text, "/") {
		text += " "
	}
	if strings.HasPrefix(text, "/") {
		text = " " + text
	}
	return text
}

// randomComment writes random comment text at indent as // lines (with
// or without a space after the slashes) or as one block comment, with or
// without a Javadoc opener and star-prefixed lines.
func (g *gen) randomComment(indent string) {
	lines := g.commentLines()
	if g.r.IntN(3) != 0 {
		sep := pick(g.r, []string{" ", " ", ""})
		for _, l := range lines {
			g.line("%s//%s%s", indent, sep, l)
		}
		return
	}
	text := strings.Join(lines, "\n"+indent+pick(g.r, []string{" * ", " *", "   ", ""}))
	g.line("%s/*%s%s*/", indent, pick(g.r, []string{"", "*", " ", "*\n" + indent + " * "}), inBlock(text))
}

// trailing is, one time in four, a trailing comment (with the blank
// before it), else "".
func (g *gen) trailing() string {
	if g.r.IntN(4) != 0 {
		return ""
	}
	l := g.commentLines()[0]
	if g.r.IntN(2) == 0 {
		return " //" + l
	}
	return " /*" + inBlock(l) + "*/"
}

// deprecated is true one time in n.
func (g *gen) deprecated(n int) bool { return g.r.IntN(n) == 0 }

// name is, two times in three, a name from pool, else an identifier of
// one to three nameParts, CamelCase or snake_case.
func (g *gen) name(pool []string, camel bool) string {
	if g.r.IntN(3) != 0 {
		return pick(g.r, pool)
	}
	var parts []string
	for i, n := 0, 1+g.r.IntN(3); i < n; i++ {
		p := pick(g.r, nameParts)
		if camel {
			p = strings.ToUpper(p[:1]) + p[1:]
		} else {
			p = strings.ToLower(p)
		}
		parts = append(parts, p)
	}
	if camel {
		n := strings.Join(parts, "")
		if n[0] >= '0' && n[0] <= '9' {
			n = "N" + n
		}
		return n
	}
	n := strings.Join(parts, "_")
	if n[0] >= '0' && n[0] <= '9' {
		n = "n" + n
	}
	return n
}

// quote is a proto string literal of s.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (g *gen) file(path string) string {
	g.used = map[string]bool{}
	g.syntax = pick(g.r, []string{"proto2", "proto3", "proto3", "editions"})
	g.comment("")
	if g.syntax == "editions" {
		g.line(`edition = "2023";%s`, g.trailing())
	} else {
		g.line(`syntax = %q;%s`, g.syntax, g.trailing())
	}
	g.line("")
	g.comment("")
	g.line("package %s;%s\n", g.pkg, g.trailing())
	g.line(`import "msgcontract/v1/options.proto";`)
	goPkg := "example.com/" + strings.ReplaceAll(g.pkg, ".", "/")
	if g.r.IntN(3) == 0 {
		goPkg += fmt.Sprintf(";p%dv1", g.index) // a package name of its own
	}
	g.line(`option go_package = %q;`, goPkg)
	// Java: the proto package, a package of the file's own (with an
	// outer class Protos, as every file has in Mesos), or one package all
	// files share, each with an outer class of its own there; top-level
	// classes only in a package no other file uses.
	switch g.r.IntN(4) {
	case 0:
		g.line(`option java_package = "com.example.prop.shared";`)
		g.line(`option java_outer_classname = "P%dProtos";`, g.index)
	case 1:
		g.line(`option java_package = "com.example.prop.p%d";`, g.index)
		if g.r.IntN(2) == 0 {
			g.line(`option java_outer_classname = "Protos";`)
		}
		fallthrough
	default:
		if g.r.IntN(4) == 0 {
			g.line("option java_multiple_files = true;")
		}
	}
	if g.deprecated(8) {
		g.line("option deprecated = true;")
	}
	g.ranges()
	machines := g.machines()
	for i, n := 0, 1+g.r.IntN(4); i < n; i++ {
		g.event("", machines)
	}
	return g.b.String()
}

func (g *gen) ranges() {
	if g.r.IntN(3) == 0 {
		return
	}
	var rs []string
	from := int64(g.r.IntN(1000)) - 500
	for i, n := 0, 1+g.r.IntN(4); i < n; i++ {
		to := from + int64(g.r.IntN(100))
		rs = append(rs, fmt.Sprintf("{ from: %d to: %d retryable: %v name: %s }", from, to, g.r.IntN(2) == 0, quote(pick(g.r, rangeNames[:len(rangeNames)-3])+fmt.Sprint(i))))
		from = to + 1 + int64(g.r.IntN(10))
	}
	g.line("option (msgcontract.v1.defaults) = {\n  retry: { base_delay: \"%dms\" multiplier: %d jitter: \"%dms\" max_delay: \"60s\" max_retries: %d }\n  error_ranges: [%s]\n  unclassified: %s\n};",
		1+g.r.IntN(900), 1+g.r.IntN(3), g.r.IntN(500), g.r.IntN(6), strings.Join(rs, ", "), pick(g.r, []string{"RETRYABLE", "NON_RETRYABLE"}))
}

// fresh returns a name from pool not used yet in this file, suffixed
// when the pool is spent.
func (g *gen) fresh(pool []string) string {
	for i := 0; ; i++ {
		n := pick(g.r, pool)
		if i > 5 {
			n += fmt.Sprint(i)
		}
		if !g.used[n] {
			g.used[n] = true
			return n
		}
	}
}

// freshName is fresh over random names (name) as well as pool's.
func (g *gen) freshName(pool []string, camel bool) string {
	for i := 0; ; i++ {
		n := g.name(pool, camel)
		if i > 5 {
			n += fmt.Sprint(i)
		}
		if !g.used[n] {
			g.used[n] = true
			return n
		}
	}
}

// options is " [a, b]" of opts in random order, or "" for none.
func (g *gen) options(opts []string) string {
	if len(opts) == 0 {
		return ""
	}
	g.r.Shuffle(len(opts), func(i, j int) { opts[i], opts[j] = opts[j], opts[i] })
	return " [" + strings.Join(opts, ", ") + "]"
}

// machines writes zero to two state machines and returns "Enum.VALUE"
// targets.
func (g *gen) machines() []string {
	var targets []string
	for m, n := 0, g.r.IntN(3); m < n; m++ {
		name := g.fresh([]string{"State", "Phase", "Status", "Door", "StateMachine", "Transit"})
		prefix := strings.ToUpper(name)
		g.comment("")
		g.line("enum %s {%s", name, g.trailing())
		g.line("  option (msgcontract.v1.state_machine) = {};")
		if g.deprecated(4) {
			g.line("  option deprecated = true;")
		}
		alias := g.syntax != "proto2" && g.r.IntN(2) == 0
		if alias {
			g.line("  option allow_alias = true;")
		}
		g.comment("  ")
		g.line("  %s_UNSPECIFIED = 0;%s", prefix, g.trailing())
		k := 2 + g.r.IntN(5)
		var names []string
		for v := 1; v <= k; v++ {
			vn := fmt.Sprintf("%s_S%d", prefix, v)
			var from []string
			for _, prev := range names {
				if g.r.IntN(2) == 0 {
					from = append(from, fmt.Sprintf("%q", prev))
				}
			}
			var opts []string
			if len(from) > 0 {
				opts = append(opts, fmt.Sprintf("(msgcontract.v1.transition) = { from: [%s] }", strings.Join(from, ", ")))
			}
			if g.deprecated(4) {
				opts = append(opts, "deprecated = true")
			}
			g.comment("  ")
			g.line("  %s = %d%s;%s", vn, v, g.options(opts), g.trailing())
			names = append(names, vn)
			if alias && (g.r.IntN(3) == 0 || v == k && len(names) == v) {
				an := vn + "_ALIAS"
				g.line("  %s = %d;", an, v)
				names = append(names, an)
			}
		}
		g.line("}")
		targets = append(targets, name+"."+pick(g.r, names))
	}
	return targets
}

var kinds = []string{"string", "int32", "int64", "uint32", "uint64", "sint64", "fixed32", "sfixed64", "bool"}

func (g *gen) event(indent string, targets []string) {
	name := g.freshName(messageNames, true)
	g.comment(indent)
	g.line("%smessage %s {%s", indent, name, g.trailing())
	if g.deprecated(5) {
		g.line("%s  option deprecated = true;", indent)
	}
	type field struct{ name, kind string }
	var fields []field
	fieldUsed := map[string]bool{}
	for i, n := 0, 1+g.r.IntN(5); i < n; i++ {
		fn := g.name(fieldNames, false)
		for fieldUsed[fn] {
			fn += "_x"
		}
		fieldUsed[fn] = true
		fields = append(fields, field{fn, pick(g.r, kinds)})
	}
	var key []string
	for _, f := range fields {
		if len(key) == 0 || g.r.IntN(2) == 0 {
			lit := strings.NewReplacer("{", "{{", "}", "}}").Replace(pick(g.r, []string{":", "/", "k:", "中", `"`, "{x}", ""}))
			key = append(key, lit+"{"+f.name+"}")
		}
	}
	target := ""
	if len(targets) > 0 && g.r.IntN(2) == 0 {
		target = " target_state: " + quote(pick(g.r, targets))
	}
	retry := ""
	if g.r.IntN(3) == 0 {
		retry = fmt.Sprintf(" retry: { max_retries: %d base_delay: \"%ds\" }", g.r.IntN(5), 1+g.r.IntN(5))
	}
	g.line("%s  option (msgcontract.v1.event) = { topic: %s event_type: %s biz_key: %s%s%s };", indent,
		quote(pick(g.r, nasty)+"t"), quote(strings.ToUpper(name)), quote(strings.Join(key, "")), target, retry)
	for i, f := range fields {
		label := ""
		var opts []string
		switch {
		case g.syntax == "proto2":
			label = pick(g.r, []string{"optional ", "required "})
		case g.syntax == "proto3" && g.r.IntN(3) == 0:
			label = "optional "
		case g.syntax == "editions" && g.r.IntN(3) == 0:
			opts = append(opts, "features.field_presence = "+pick(g.r, []string{"IMPLICIT", "EXPLICIT", "LEGACY_REQUIRED"}))
		}
		if g.deprecated(4) {
			opts = append(opts, "deprecated = true")
		}
		g.comment(indent + "  ")
		g.line("%s  %s%s %s = %d%s;%s", indent, label, f.kind, f.name, i+1, g.options(opts), g.trailing())
	}
	if indent == "" && g.r.IntN(3) == 0 {
		g.event(indent+"  ", nil)
	}
	g.line("%s}", indent)
}
