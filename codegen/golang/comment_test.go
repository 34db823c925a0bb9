package golang

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/compiler/protogen"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// oddComments are .proto comments, as written in the .proto (// lines or
// a /* */ block), of the shapes gofmt rewrites in a doc comment unless
// they are written as it would print them: indentation (a code block),
// "*" and "-" lines (lists, or the stars of a block comment), blank and
// trailing white space, comment markers inside the text, non-ASCII text
// and long lines.
var oddComments = map[string]string{
	"javadoc block":       "/**\n * Paid is paid.\n *\n *   indented\n * - item\n *   more\n */\n",
	"block, no stars":     "/* a\n   b\n     c */\n",
	"block, star lines":   "/*\n * x\n *\n * y\n */\n",
	"indented lines":      "//   indented\n//   more\n",
	"indented after text": "// a\n//   b\n// c\n",
	"code then list":      "// Example:\n//\n//     order.Pay()\n// * note\n//   more\n",
	"code then star list": "//0\n//\t0\n//* 0\n//\t0\n",
	"code, list, code":    "// x\n//\tcode\n//  - item\n//\tcode again\n//  1. one\n",
	"star list":           "//  * star\n//  * star2\n",
	"numbered list":       "// x\n//  1. one\n//  2) two\n// y\n",
	"list then text":      "//  - a\n// b\n//   - c\n//\n//\td\n",
	"tabs":                "// a\n//\t\tb\n//\t c\n// \td\n",
	"blank lines":         "//\n//\n// a\n//\n//\n//\n// b\n//\n",
	"trailing spaces":     "// a   \n//   \n// b\t\n//  \t \n",
	"comment markers":     "// */ ends /* starts\n//   /* indented */\n// // slashes\n",
	"non-ASCII":           "// ü ist ein Buchstabe\n//   • Punkt\n//\u00a0\u00a0nbsp\n// 日本語のコメント\n",
	"long lines":          "// " + strings.Repeat("word ", 60) + "\n//   " + strings.Repeat("x", 300) + "\n",
	"heading shapes":      "// Text.\n//\n// Old Heading\n//\n// # New heading\n//\n//   # indented hash\n",
	"links":               "// [Foo] and [text]\n//\n//   [text]: https://example.com\n// [x]: y\n",
	"directive-like":      "//go:generate x\n//line foo.go:1\n//  //go:build y\n",
	"build constraints":   "// +build ignore\n//\n//   +build linux\n//\t+build\n// go:build x\n// +buildx stays\n",
}

// goCommentSource is a contract whose event and state machine carry the
// .proto comment c.
func goCommentSource(c string) string {
	return `syntax = "proto3";
package f.v1;
import "msgcontract/v1/options.proto";
option go_package = "example.com/f/v1;fv1";
` + c + `message Paid {
  option (msgcontract.v1.event) = { topic: "t" event_type: "PAID" biz_key: "{id}" };
  string id = 1;
}
` + c + `enum State {
  option (msgcontract.v1.state_machine) = {};
  STATE_UNSPECIFIED = 0;
  OPEN = 1;
  DONE = 2 [(msgcontract.v1.transition) = { from: ["OPEN"] }];
}
`
}

// checkGoComment generates Go for goCommentSource(c) and fails unless
// gofmt leaves it as it is. It returns false when c makes no contract.
func checkGoComment(t *testing.T, c string) bool {
	t.Helper()
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"f/v1/f.proto": goCommentSource(c)}}, "f/v1/f.proto")
	if err != nil || len(set.Diagnostics) > 0 {
		return false
	}
	files, err := Generate(set, emit.Params{Lang: "go"})
	if err != nil {
		t.Fatalf("%q: %v", c, err)
	}
	if len(files) != 1 {
		t.Fatalf("%q: %d files, want 1", c, len(files))
	}
	if err := isCanonical(files[0].Content); err != nil {
		t.Errorf("comment %q: %v\n%s", c, err, files[0].Content)
	}
	return true
}

// TestGoCommentsGofmtStable: whatever a .proto comment holds, the Go
// generated with it is what gofmt prints (#43: indented lines and "*"
// lines came out in a form gofmt rewrites).
func TestGoCommentsGofmtStable(t *testing.T) {
	t.Parallel()
	for name, c := range oddComments {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if !checkGoComment(t, c) {
				t.Fatalf("%q makes no contract", c)
			}
		})
	}
}

// FuzzGoComment: any comment text, as // lines or, when it can be, as a
// /* */ block, generates Go gofmt leaves as it is; and what canonicalDoc
// falls back on for text it cannot settle (unsettledDoc) gofmt reads back
// as it is written, whatever the text.
func FuzzGoComment(f *testing.F) {
	for _, c := range oddComments {
		f.Add(c, false)
	}
	for _, s := range fuzzComments {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, text string, block bool) {
		c := protoComment(text)
		if block && !strings.Contains(text, "*/") {
			c = "/*" + text + "*/\n"
		}
		checkGoComment(t, c)
		if u := unsettledDoc(docComment("X is the thing.", protogen.Comments(commentText(text)))); docPass(u) != u {
			t.Errorf("unsettledDoc of %q is not a fixed point:\n%q\n%q", text, u, docPass(u))
		}
	})
}
