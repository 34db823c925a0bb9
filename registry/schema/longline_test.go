package schema

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// naiveColumn is protocompile's own column rule (tabs to the next multiple
// of 8, one column per rune), computed by scanning the whole line: what the
// patched ast.FileInfo.SourcePos must still answer.
func naiveColumn(line string, offset int) int {
	col := 0
	for i := 0; i < offset; i++ {
		switch c := line[i]; {
		case c == '\t':
			col += 8 - col%8
		case utf8.RuneStart(c):
			col++
		}
	}
	return col + 1
}

// TestLongLinePositions checks positions far into one long line, with tabs
// and multi-byte runes before them, against a scan from the line's start:
// the carried protocompile patch remembers columns every 1 KiB and must not
// change any position.
func TestLongLinePositions(t *testing.T) {
	for _, size := range []int{100, 1023, 1024, 1025, 5000, 70_000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			var b strings.Builder
			b.WriteString("syntax = \"proto3\";\tpackage p; /* é\t日本 */ message M { ")
			for i := 1; b.Len() < size; i++ {
				fmt.Fprintf(&b, "string f%d = %d; /* ü\t*/ ", i, i)
			}
			prefix := b.String()
			src := prefix + "Missing bad = 999999; }"
			_, err := Parse(context.Background(), "x.proto", src, nil, nil)
			var ie *InvalidError
			if !errors.As(err, &ie) {
				t.Fatalf("want an InvalidError for the unknown type, got %v", err)
			}
			want := fmt.Sprintf("x.proto:1:%d:", naiveColumn(src, len(prefix)))
			if !strings.Contains(ie.Error(), want) {
				t.Fatalf("want the error at %s, got %s", want, ie.Error())
			}
		})
	}
}

// TestParseCancelled: a compilation whose context is done reports the
// context's error, not an invalid schema, so the server can tell a client
// that gave up (or a deadline) from a bad schema.
func TestParseCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Parse(ctx, "x.proto", `syntax = "proto3"; package p; message M { string a = 1; }`, nil, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}
