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
)

// Random writes n random contracts (import path → source) from seed. Each
// is meant to be valid; the property test lints them and builds those lint
// accepts.
func Random(seed uint64, n int) map[string]string {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := map[string]string{}
	for i := 0; i < n; i++ {
		g := &gen{r: r, pkg: fmt.Sprintf("prop.p%d.v1", i)}
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
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func (g *gen) line(format string, args ...any) { fmt.Fprintf(&g.b, format+"\n", args...) }

func (g *gen) comment(indent string) {
	if g.r.IntN(3) == 0 {
		return
	}
	for _, l := range strings.Split(pick(g.r, nasty), "\n") {
		g.line("%s// %s", indent, l)
	}
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
	if g.syntax == "editions" {
		g.line(`edition = "2023";`)
	} else {
		g.line(`syntax = %q;`, g.syntax)
	}
	g.line("\npackage %s;\n", g.pkg)
	g.line(`import "msgcontract/v1/options.proto";`)
	g.line(`option go_package = "example.com/%s";`, strings.ReplaceAll(g.pkg, ".", "/"))
	if g.r.IntN(4) == 0 {
		g.line("option java_multiple_files = true;")
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

// machines writes zero to two state machines and returns "Enum.VALUE"
// targets.
func (g *gen) machines() []string {
	var targets []string
	for m, n := 0, g.r.IntN(3); m < n; m++ {
		name := g.fresh([]string{"State", "Phase", "Status", "Door", "StateMachine", "Transit"})
		prefix := strings.ToUpper(name)
		g.comment("")
		g.line("enum %s {", name)
		g.line("  option (msgcontract.v1.state_machine) = {};")
		alias := g.syntax != "proto2" && g.r.IntN(2) == 0
		if alias {
			g.line("  option allow_alias = true;")
		}
		g.line("  %s_UNSPECIFIED = 0;", prefix)
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
			opt := ""
			if len(from) > 0 {
				opt = fmt.Sprintf(" [(msgcontract.v1.transition) = { from: [%s] }]", strings.Join(from, ", "))
			}
			g.line("  %s = %d%s;", vn, v, opt)
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
	name := g.fresh(messageNames)
	g.comment(indent)
	g.line("%smessage %s {", indent, name)
	type field struct{ name, kind string }
	var fields []field
	fieldUsed := map[string]bool{}
	for i, n := 0, 1+g.r.IntN(5); i < n; i++ {
		fn := pick(g.r, fieldNames)
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
		switch {
		case g.syntax == "proto2":
			label = pick(g.r, []string{"optional ", "required "})
		case g.syntax == "proto3" && g.r.IntN(3) == 0:
			label = "optional "
		}
		g.line("%s  %s%s %s = %d;", indent, label, f.kind, f.name, i+1)
	}
	if indent == "" && g.r.IntN(3) == 0 {
		g.event(indent+"  ", nil)
	}
	g.line("%s}", indent)
}
