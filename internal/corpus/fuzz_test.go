package corpus_test

import (
	"bufio"
	"context"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/generate"
	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/conformance/toolchain/python"
	"github.com/msgcontract/msgcontract/internal/corpus"
)

// parseServer is a long-running parser of one language (see testdata):
// a request is a byte count line and the source, an answer one line.
type parseServer struct {
	mu  sync.Mutex
	in  io.WriteCloser
	out *bufio.Reader
}

func startServer(name string, args ...string) (*parseServer, error) {
	cmd := exec.Command(name, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &parseServer{in: in, out: bufio.NewReader(out)}, nil
}

func (s *parseServer) parse(src []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := fmt.Fprintf(s.in, "%d\n%s", len(src), src); err != nil {
		return "", err
	}
	line, err := s.out.ReadString('\n')
	return strings.TrimSpace(line), err
}

var (
	serversOnce    sync.Once
	javaP, pythonP *parseServer
	serversErr     error
)

// servers starts the Java and Python parse servers once per process; they
// end with it (their stdin closes).
func servers() (*parseServer, *parseServer, error) {
	serversOnce.Do(func() {
		py, err := python.Interpreter()
		if err != nil {
			serversErr = err
			return
		}
		if pythonP, serversErr = startServer(py, filepath.Join("testdata", "parse_server.py")); serversErr != nil {
			return
		}
		javaP, serversErr = startServer("java", filepath.Join("testdata", "ParseServer.java"))
	})
	return javaP, pythonP, serversErr
}

// protoString is s as a proto string literal: every byte outside printable
// ASCII as an octal escape, so any valid UTF-8 survives.
func protoString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// FuzzEscaping puts arbitrary text into a contract's comments, topic,
// event type, biz_key template and error-range name, generates Go, Java and
// Python, and parses every output with each language's own parser (go/parser,
// javac's, CPython's compile); the Go must be gofmt-stable too. A contract
// protocompile refuses (text no .proto can hold) is skipped; one it accepts
// must give sources that parse.
func FuzzEscaping(f *testing.F) {
	for _, seed := range []string{
		`ends in a quote"`, `"starts with one`, `back\slash`, `\u000a \u002a/ \u0022`, `*/`, `"""`,
		"${x}", "#{y}", "\x00nul", "cr\rlf\r\n", "😀 non-BMP", "\u2028\u2029", "\ufeffbom", `'''`, "%s %d",
		"@param <b>&amp;", "\\", "\"\"\"\\", "\t\v\f",
		// What gofmt rewrites in doc comments: indented lines, stars and
		// list markers, headings, build constraints.
		"   three spaces\n one\nnone", "* star\n * star\n*/", "\ttab\n\t\ttabs", "text\n    code\ntext",
		"- a\n+ b\n1. c\n2) d", "# Heading", "text\n\n# Heading\n\ntext", "trailing   \n\t\n",
		"+build ignore", "go:build ignore", "\u00a0nbsp\u00a0", "[link]: https://example.com",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !utf8.ValidString(text) {
			return
		}
		javaS, pyS, err := servers()
		if err != nil {
			t.Fatal(err)
		}
		var comment strings.Builder
		for _, l := range strings.Split(text, "\n") {
			comment.WriteString("// " + l + "\n")
		}
		tmpl := strings.NewReplacer("{", "{{", "}", "}}").Replace(text) + "{id}"
		src := fmt.Sprintf(`syntax = "proto3";
package fz.v1;
import "msgcontract/v1/options.proto";
option go_package = "example.com/fz/v1;fzv1";
option (msgcontract.v1.defaults) = { error_ranges: [{ from: 1 to: 2 retryable: true name: %s }] };
%senum State {
  option (msgcontract.v1.state_machine) = {};
  STATE_UNSPECIFIED = 0;
  A = 1;
}
/* %s */
%smessage Ev {
  option (msgcontract.v1.event) = { topic: %s event_type: %s biz_key: %s target_state: "State.A" };
  string id = 1;
}
`, protoString(text), comment.String(), strings.ReplaceAll(text, "*/", "* /"), comment.String(),
			protoString(text+"t"), protoString(text+"E"), protoString(tmpl))
		set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"fz.proto": src}}, "fz.proto")
		if err != nil {
			return // not a .proto protocompile accepts
		}
		generate.Lint(set)
		if len(set.Diagnostics) > 0 {
			return // e.g. an empty topic
		}
		for _, lang := range generate.Langs {
			files, err := generate.Run(set, emit.Params{Lang: lang})
			if err != nil {
				t.Fatalf("%s: %v", lang, err)
			}
			if msg := parses(t, javaS, pyS, lang, files); msg != "" {
				t.Fatalf("%s\ntext %q", msg, text)
			}
		}
	})
}

// parses parses every file msgcontract generated in lang (its support
// files aside) with the language's own parser: go/parser, javac's,
// CPython's compile. Go must also be gofmt-stable (corpus.GofmtDiff).
// It returns "" or what fails, with the file.
func parses(t *testing.T, javaS, pyS *parseServer, lang string, files []emit.File) string {
	t.Helper()
	for _, gf := range files {
		if strings.HasPrefix(gf.Name, "io/msgcontract/support/") || gf.Name == "msgcontract/support.py" {
			continue
		}
		var answer string
		var err error
		switch lang {
		case "go":
			answer = "ok"
			if _, err := parser.ParseFile(token.NewFileSet(), gf.Name, gf.Content, parser.ParseComments); err != nil {
				answer = err.Error()
			} else if d := corpus.GofmtDiff(gf.Content); d != "" {
				return fmt.Sprintf("go output %s is not gofmt-stable: %s\n%s", gf.Name, d, gf.Content)
			}
		case "java":
			answer, err = javaS.parse(gf.Content)
		case "python":
			answer, err = pyS.parse(gf.Content)
		}
		if err != nil {
			t.Fatalf("%s parser: %v", lang, err)
		}
		if answer != "ok" {
			return fmt.Sprintf("%s output %s does not parse: %s\n%s", lang, gf.Name, answer, gf.Content)
		}
	}
	return ""
}
