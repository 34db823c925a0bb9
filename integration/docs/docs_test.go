package docs_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// maxReadmeLines is README.md's limit: details belong in docs/.
const maxReadmeLines = 250

// root is the repository's root, seen from this package's directory.
const root = "../.."

// link matches a markdown link or image: [text](target) or ![alt](target).
var link = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)

func TestReadmeLength(t *testing.T) {
	n := len(readLines(t, filepath.Join(root, "README.md")))
	if n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d: move the details to a file in docs/ and link it", n, maxReadmeLines)
	}
}

// TestReadmeLinksIntoDocs checks README.md links into docs/ at all: the
// README is the index of the documentation.
func TestReadmeLinksIntoDocs(t *testing.T) {
	var n int
	for _, l := range links(t, "README.md") {
		if strings.HasPrefix(l.target, "docs/") || strings.HasPrefix(l.target, "./docs/") {
			n++
		}
	}
	if n == 0 {
		t.Error("README.md links to no file in docs/")
	}
}

// TestLinks checks every relative link of README.md and docs/*.md: the
// file it names exists, and the heading its #fragment names is in that
// file (a GitHub heading anchor).
func TestLinks(t *testing.T) {
	files := []string{"README.md"}
	mds, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mds {
		rel, err := filepath.Rel(root, m)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	if len(files) < 2 {
		t.Fatal("no docs/*.md found")
	}
	anchorCache := map[string]map[string]bool{}
	for _, f := range files {
		for _, l := range links(t, f) {
			target := l.target
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := f // a bare #fragment is a heading of the same file
			if path != "" {
				dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(f), path)))
				if dest == ".." || strings.HasPrefix(dest, "../") {
					t.Errorf("%s:%d: link %q leaves the repository", f, l.line, target)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", f, l.line, target, dest)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			anchors, ok := anchorCache[dest]
			if !ok {
				anchors = headingAnchors(t, dest)
				anchorCache[dest] = anchors
			}
			if !anchors[frag] {
				t.Errorf("%s:%d: link %q: %s has no heading with the anchor #%s", f, l.line, target, dest, frag)
			}
		}
	}
}

type mdLink struct {
	target string
	line   int
}

// links returns the links of a markdown file (relative to root) outside
// fenced code blocks and inline code.
func links(t *testing.T, file string) []mdLink {
	t.Helper()
	var out []mdLink
	inFence := false
	for i, line := range readLines(t, filepath.Join(root, file)) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range link.FindAllStringSubmatch(stripInlineCode(line), -1) {
			out = append(out, mdLink{target: m[1], line: i + 1})
		}
	}
	return out
}

var inlineCode = regexp.MustCompile("`[^`]*`")

func stripInlineCode(line string) string {
	return inlineCode.ReplaceAllString(line, "``")
}

// headingAnchors returns the anchors GitHub gives a markdown file's
// headings: lower case, punctuation dropped, spaces as hyphens, and -1,
// -2, ... after repeated ones.
func headingAnchors(t *testing.T, file string) map[string]bool {
	t.Helper()
	anchors := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range readLines(t, filepath.Join(root, file)) {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		a := slug(text)
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_':
			b.WriteRune(r)
		case unicode.IsLetter(r), unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
