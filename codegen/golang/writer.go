package golang

import (
	"go/build/constraint"
	"go/doc/comment"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// writer builds one generated file as gofmt-canonical text, with no
// format pass: the emitter writes every construct in the layout gofmt
// prints it in (tab indentation, one statement per line, composite literal
// keys aligned by gofmt's rule, doc comments in go/doc/comment's form).
// fixedpoint_test.go checks that gofmt leaves every emitted file as it
// is, and jenref_test.go that the bytes equal those of the jennifer +
// go/format emitter this replaced.
type writer struct {
	body []byte
	// self is the import path of the file's own package: identifiers of
	// it are written unqualified.
	self    string
	imports map[string]importDef
}

// importDef is the local name of an imported package; alias says it is
// written in the import block.
type importDef struct {
	name  string
	alias bool
}

// newWriter starts a file of package self in body (emptied).
func newWriter(self string, body []byte) *writer {
	return &writer{body: body[:0], self: self, imports: map[string]importDef{}}
}

// bodyPool lends the buffers files are written into: writer.bytes copies
// the finished file out, so a run rendering a few files at a time needs a
// few buffers, not one per file (with the plugin's collector off, every
// fresh buffer is fresh pages). The zero value is ready; a nil pool
// allocates each time.
type bodyPool struct{ pool sync.Pool }

func (p *bodyPool) get() []byte {
	if p != nil {
		if b, ok := p.pool.Get().(*[]byte); ok {
			return *b
		}
	}
	return make([]byte, 0, 16<<10)
}

func (p *bodyPool) put(b []byte) {
	if p != nil {
		p.pool.Put(&b)
	}
}

// s appends text to the body.
func (w *writer) s(parts ...string) {
	for _, p := range parts {
		w.body = append(w.body, p...)
	}
}

// qual is name in package path, qualified unless path is the file's own
// package. Packages are named when first used, as jennifer named them
// (the generated imports must not change): the runtime packages and the
// standard library by importNames, any other package by the last element
// of its path (an alias in the import block), with a number appended
// while the name is a Go keyword, a predeclared identifier, "err" or
// already taken.
func (w *writer) qual(path, name string) string {
	if path == w.self {
		return name
	}
	return w.pkg(path) + "." + name
}

func (w *writer) pkg(path string) string {
	if def, ok := w.imports[path]; ok {
		return def.name
	}
	name, alias := importNames[path], false
	if name == "" {
		name, alias = guessName(path), true
	}
	unique := name
	for i := 1; !w.free(unique); i++ {
		unique = name + strconv.Itoa(i)
	}
	if unique != name {
		alias = true
	}
	w.imports[path] = importDef{name: unique, alias: alias}
	return unique
}

// free says whether name can name another import.
func (w *writer) free(name string) bool {
	if reserved[name] {
		return false
	}
	for _, def := range w.imports {
		if def.name == name {
			return false
		}
	}
	return true
}

// reserved are the names jennifer never gives an import: keywords,
// predeclared identifiers and "err".
var reserved = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`break default func interface select case defer go map struct chan else
		goto package switch const fallthrough if range type continue for import return var
		bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string
		uint uint8 uint16 uint32 uint64 uintptr true false iota nil append cap close clear min max
		complex copy delete imag len make new panic print println real recover err`) {
		m[w] = true
	}
	return m
}()

// guessName is a package name from its import path: the last element,
// lower-cased, letters and digits only, no leading digits, "pkg" if
// nothing is left.
func guessName(path string) string {
	path = strings.TrimSuffix(path, "/")
	path = strings.ToLower(path[strings.LastIndex(path, "/")+1:])
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if c := path[i]; 'a' <= c && c <= 'z' || '0' <= c && c <= '9' && b.Len() > 0 {
			b.WriteByte(c)
		}
	}
	if b.Len() == 0 {
		return "pkg"
	}
	return b.String()
}

// doc starts a top-level declaration with its doc comment: text as //
// lines, in the form gofmt gives doc comments (go/printer runs them
// through go/doc/comment). Comments of plain paragraphs, what the
// generator writes unless a .proto comment says more, come back from it
// unchanged, and skip the parser.
func (w *writer) doc(text string) {
	if len(w.body) > 0 {
		w.body = append(w.body, '\n')
	}
	text = commentText(text)
	if !plainDoc(text) {
		text = canonicalDoc(text)
	}
	for rest, more := text, true; more; {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		switch {
		case line == "":
			w.s("//\n")
		case line[0] == '\t':
			w.s("//", noPlusBuild(trimRight(line)), "\n")
		default:
			w.s("// ", noPlusBuild(trimRight(line)), "\n")
		}
	}
}

// noPlusBuild is the text of a // line, after the "//", changed if need
// be so that the line does not read as a "// +build" constraint: gofmt
// takes every such line of a file, wherever it is, for one and moves it
// above the package clause. Its + is then written \u002B, as commentText
// writes what gofmt would rewrite.
func noPlusBuild(text string) string {
	if !strings.Contains(text, "+build") || !constraint.IsPlusBuild("//"+text) {
		return text
	}
	i := strings.Index(text, "+build")
	return text[:i] + `\u002B` + text[i+1:]
}

// canonicalDoc is text (lines without the "// ") as gofmt leaves a doc
// comment holding it. gofmt reads a doc comment with go/doc/comment,
// prints it back and strips the lines' trailing white space (docPass);
// that is not always a fixed point: a list right after a code block, for
// one, is printed as a list and read back as more of the code block. So
// the text is passed through again until gofmt would change nothing,
// which takes a pass or two; text that has not settled after
// maxDocPasses (none the fuzzers found) is written as unsettledDoc.
func canonicalDoc(text string) string {
	if settled, ok := settle(text); ok {
		return settled
	}
	return unsettledDoc(text)
}

// maxDocPasses bounds settle's passes.
const maxDocPasses = 8

// settle passes text through docPass until it changes no more, at most
// maxDocPasses times, and says whether it did.
func settle(text string) (string, bool) {
	for range maxDocPasses {
		next := docPass(text)
		if next == text {
			return text, true
		}
		text = next
	}
	return text, false
}

// unsettledDoc is a doc comment gofmt reads back as it is written, for
// text settle cannot settle: its first paragraph, the generator's own
// plain text, settled alone, then the rest as one code block.
func unsettledDoc(text string) string {
	head, rest, _ := strings.Cut(text, "\n\n")
	head, _ = settle(head)
	if rest = codeBlock(rest); rest != "" {
		return head + "\n\n" + rest
	}
	return head
}

// docPass is what gofmt makes of a doc comment's text.
func docPass(text string) string {
	var p comment.Parser
	var pr comment.Printer
	out := strings.TrimSuffix(string(pr.Comment(p.Parse(text+"\n"))), "\n")
	var b strings.Builder
	b.Grow(len(out))
	for rest, more := out, true; more; {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		b.WriteString(trimRight(line))
		if more {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// codeBlock is text as one code block that go/doc/comment, after a
// paragraph, reads back as it is: every line indented by a tab and led by
// "| ", so that no line of it starts a list (a span of indented lines
// whose first line is a list item is a list); blank lines inside are
// kept, at its ends dropped, and so is white space at the ends of lines.
func codeBlock(text string) string {
	var b strings.Builder
	blank := 0 // blank lines held back until a line follows them
	for line := range strings.SplitSeq(text, "\n") {
		if line = trimRight(line); line == "" {
			blank++
			continue
		}
		if b.Len() > 0 {
			for ; blank > 0; blank-- {
				b.WriteByte('\n')
			}
			b.WriteByte('\n')
		}
		blank = 0
		b.WriteString("\t| ")
		b.WriteString(line)
	}
	return b.String()
}

// comment writes text as // lines indented by indent: a comment that is
// not a doc comment, which gofmt leaves as written but for trailing space.
func (w *writer) comment(indent, text string) {
	for _, l := range lines(text) {
		w.s(indent, "//", noPlusBuild(trimRight(l[len("//"):])), "\n")
	}
}

// trimRight is what gofmt strips from the end of a // comment line.
func trimRight(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }

// plainDoc says whether go/doc/comment would print text (lines without
// the "// ") as it is: paragraphs of unindented lines separated by single
// blank lines, with nothing the parser reads as markup (links, headings,
// doubled backquotes or quotes), and no single-line paragraph after the
// first that could be an old-style heading. It may say false for text that
// would come back unchanged; the parser then decides.
func plainDoc(text string) bool {
	if text == "" || strings.Contains(text, "[") || strings.Contains(text, "``") || strings.Contains(text, "''") {
		return false
	}
	prev := ""    // the line before, "" at the start
	para := 0     // lines in the current paragraph
	first := true // in the first paragraph
	for rest, more := text, true; more; {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		if line == "" {
			if para == 0 || !more { // leading, doubled or trailing blank line
				return false
			}
			if !first && para == 1 && endsInWord(prev) {
				return false
			}
			first, para = false, 0
			continue
		}
		r0, _ := utf8.DecodeRuneInString(line)
		r1, _ := utf8.DecodeLastRuneInString(line)
		if unicode.IsSpace(r0) || unicode.IsSpace(r1) || r0 == '#' {
			return false
		}
		prev = line
		para++
	}
	return true
}

func endsInWord(l string) bool {
	r, _ := utf8.DecodeLastRuneInString(l)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// keyValues writes the lines of a composite literal with one key: value
// pair a line, keys aligned as gofmt aligns them (go/printer's exprList):
// in sections, a new one started where one of two neighbouring keys is
// over 40 bytes and the key's length is not within a factor 2.5 of the
// geometric mean of the section's keys so far.
func (w *writer) keyValues(indent string, keys, values []string) {
	const smallSize, ratioMax = 40, 2.5
	lnsum, count := 0.0, 0
	start := 0
	flush := func(end int) {
		width := 0
		for _, k := range keys[start:end] {
			width = max(width, utf8.RuneCountInString(k))
		}
		for i := start; i < end; i++ {
			w.s(indent, keys[i], ":", strings.Repeat(" ", width-utf8.RuneCountInString(keys[i])+1), values[i], ",\n")
		}
		start = end
	}
	for i, k := range keys {
		size := len(k)
		if i > 0 && (len(keys[i-1]) > smallSize || size > smallSize) {
			ratio := float64(size) / math.Exp(lnsum/float64(count))
			if ratioMax*ratio <= 1 || ratioMax <= ratio {
				flush(i)
				lnsum, count = 0, 0
			}
		}
		lnsum += math.Log(float64(size))
		count++
	}
	flush(len(keys))
}

// bytes is the whole file: header comments, package clause, imports (one
// block, sorted by path, as jennifer wrote them) and the body.
func (w *writer) bytes(headers []string, pkgName string) []byte {
	b := make([]byte, 0, len(w.body)+1024+64*len(w.imports))
	for _, h := range headers {
		b = append(b, trimRight("// "+h)...)
		b = append(b, '\n')
	}
	b = append(b, "\npackage "...)
	b = append(b, pkgName...)
	b = append(b, "\n\n"...)
	paths := make([]string, 0, len(w.imports))
	for p := range w.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	spec := func(p string) {
		if def := w.imports[p]; def.alias {
			b = append(b, def.name...)
			b = append(b, ' ')
		}
		b = strconv.AppendQuote(b, p)
		b = append(b, '\n')
	}
	switch len(paths) {
	case 0:
	case 1:
		b = append(b, "import "...)
		spec(paths[0])
		b = append(b, '\n')
	default:
		b = append(b, "import (\n"...)
		for _, p := range paths {
			b = append(b, '\t')
			spec(p)
		}
		b = append(b, ")\n\n"...)
	}
	return append(b, w.body...)
}
