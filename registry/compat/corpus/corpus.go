// Package corpus reads the compatibility corpus under testdata/compat: one
// directory per case, holding the previous version under prev/, the
// current one under cur/ and the expected rule IDs in want.
//
// want lists the rule IDs expected at FULL, one or more per line; a line
// "LEVEL: IDs..." states what another level expects (an empty list: the
// change passes that level). A line "CODE: IDs..." lists the CODE rules
// (compat.WithSource) the change breaks on top of FULL's; without one it
// breaks none. Lines starting with # are comments; the first
// comment, if any, describes the case.
package corpus

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/registry/compat"
)

// Fixtures are directories under the corpus root that are not cases (the
// CLI's own fixtures).
var Fixtures = map[string]bool{"breaking": true}

// Case is one previous/current pair.
type Case struct {
	Name string
	Dir  string
	// Doc is the first comment of want.
	Doc string
	// Want maps a level to the sorted rule IDs expected there; FULL is
	// always present.
	Want map[compat.Level][]string
	// Code lists the CODE rules found at FULL with compat.WithSource.
	Code []string
}

// Prev and Cur are the directories of the two versions.
func (c Case) Prev() string { return filepath.Join(c.Dir, "prev") }
func (c Case) Cur() string  { return filepath.Join(c.Dir, "cur") }

// Load reads every case under root, sorted by name.
func Load(root string) ([]Case, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []Case
	for _, e := range entries {
		if !e.IsDir() || Fixtures[e.Name()] {
			continue
		}
		c, err := readCase(filepath.Join(root, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func readCase(dir string) (Case, error) {
	c := Case{Name: filepath.Base(dir), Dir: dir, Want: map[compat.Level][]string{compat.Full: nil}}
	for _, side := range []string{"prev", "cur"} {
		if st, err := os.Stat(filepath.Join(dir, side)); err != nil || !st.IsDir() {
			return c, fmt.Errorf("%s: case has no %s/ directory", dir, side)
		}
	}
	f, err := os.Open(filepath.Join(dir, "want"))
	if err != nil {
		return c, fmt.Errorf("%s: case has no want file: %w", dir, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(text, "#") {
			if c.Doc == "" {
				c.Doc = strings.TrimSpace(strings.TrimPrefix(text, "#"))
			}
			continue
		}
		if text == "" {
			continue
		}
		level := compat.Full
		if rest, ok := strings.CutPrefix(text, "CODE:"); ok {
			c.Code = append(c.Code, strings.Fields(rest)...)
			continue
		}
		if l, rest, ok := strings.Cut(text, ":"); ok {
			if level, err = compat.ParseLevel(l); err != nil {
				return c, fmt.Errorf("%s/want:%d: %w", dir, line, err)
			}
			text = rest
			if _, ok := c.Want[level]; !ok || level == compat.Full {
				c.Want[level] = []string{}
			}
		}
		for _, id := range strings.Fields(text) {
			if _, ok := compat.LookupRule(id); !ok {
				return c, fmt.Errorf("%s/want:%d: unknown rule %s", dir, line, id)
			}
			c.Want[level] = append(c.Want[level], id)
		}
	}
	for l := range c.Want {
		sort.Strings(c.Want[l])
	}
	for _, id := range c.Code {
		if r, ok := compat.LookupRule(id); !ok || r.Category != compat.Code {
			return c, fmt.Errorf("%s/want: CODE line names %s, not a CODE rule", dir, id)
		}
	}
	sort.Strings(c.Code)
	return c, sc.Err()
}

// LoadDir compiles every .proto file under dir, with dir as the import
// path, as `msgcontract breaking --against DIR` does.
func LoadDir(ctx context.Context, dir string) (*model.Set, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".proto") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return model.Load(ctx, model.Config{ImportPaths: []string{dir}}, files...)
}
