package generate

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// Target is one language of a run and the folder of its files inside the
// output directory: "" when the run names one language, which then writes
// straight into the output directory.
type Target struct{ Lang, Dir string }

// Targets reads a language list: one language ("go"), or several joined by
// "+" ("go+java+python"), each named once. With several, each language's
// files go into a folder of its own: dirs[lang] when set, else the
// language's name, as protoc's --go_out=DIR/go --java_out=DIR/java
// --python_out=DIR/python lay theirs out. The folders must be relative,
// inside the output directory and distinct once cleaned ("gen/java/" is
// "gen/java"). flag is how the caller's
// users spell the setting: a protoc parameter ("lang=", whose folders are
// go_dir= ...) or a command-line flag ("--lang ", whose folders are
// --go-dir ...); errors name both so.
func Targets(list string, dirs map[string]string, flag string) ([]Target, error) {
	var out []Target
	for _, l := range strings.Split(list, "+") {
		if !slices.Contains(Langs, l) {
			return nil, fmt.Errorf("unknown language %q in %s%s; choose one of %s, or several joined by + (%sgo+java+python)",
				l, flag, list, strings.Join(Langs, ", "), flag)
		}
		if slices.ContainsFunc(out, func(t Target) bool { return t.Lang == l }) {
			return nil, fmt.Errorf("%s%s names %s twice", flag, list, l)
		}
		out = append(out, Target{Lang: l})
	}
	if len(out) == 1 {
		return out, nil
	}
	for i := range out {
		dir := out[i].Lang
		if d, ok := dirs[dir]; ok {
			// "src/main/java/" and "./py" are what users type.
			if dir = path.Clean(d); d == "" || emit.SafeName(dir) != nil || dir == "." {
				return nil, fmt.Errorf("%s%q: want a relative folder inside the output directory, such as %s or gen/%s", DirFlag(flag, out[i].Lang), d, out[i].Lang, out[i].Lang)
			}
		}
		for _, o := range out[:i] {
			if o.Dir == dir {
				return nil, fmt.Errorf("%s and %s are both %q: each language needs its own folder",
					strings.TrimRight(DirFlag(flag, o.Lang), "= "), strings.TrimRight(DirFlag(flag, out[i].Lang), "= "), dir)
			}
		}
		out[i].Dir = dir
	}
	return out, nil
}

// DirFlag is how the users of a caller whose language setting is spelled
// flag ("lang=" or "--lang ") name lang's folder: "go_dir=" or "--go-dir ".
func DirFlag(flag, lang string) string {
	if strings.HasPrefix(flag, "--") {
		return "--" + lang + "-dir "
	}
	return lang + "_dir="
}

// Params is p for t: t's language and, in a run of several languages,
// Paths, Module, GoImportPaths and WithPB for Go alone: they are protoc-gen-go's, and
// Java and Python are then laid out as protoc's --java_out and
// --python_out lay theirs out.
func (t Target) Params(p emit.Params) emit.Params {
	p.Lang = t.Lang
	if t.Dir != "" && t.Lang != "go" {
		p.Paths, p.Module, p.GoImportPaths, p.WithPB = "", "", nil, false
	}
	return p
}

// ViewParams are the parameters of the one protogen view a run of targets
// shares (ShareGoView, golang.UsePlugin): Go's when the run generates Go,
// else the first language's.
func ViewParams(p emit.Params, targets []Target) emit.Params {
	for _, t := range targets {
		if t.Lang == "go" {
			return t.Params(p)
		}
	}
	return targets[0].Params(p)
}

// RunTargets is Run for each target in turn: the files of each language,
// sorted, each named under its target's folder.
func RunTargets(set *model.Set, p emit.Params, targets []Target) ([]emit.File, error) {
	var all []emit.File
	for _, t := range targets {
		files, err := Run(set, t.Params(p))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			f.Name = path.Join(t.Dir, f.Name)
			all = append(all, f)
		}
	}
	return all, nil
}

// EachTarget is Each for each target in turn, every file named under its
// target's folder.
func EachTarget(set *model.Set, p emit.Params, targets []Target, fn func(emit.File) error) error {
	for _, t := range targets {
		err := Each(set, t.Params(p), func(f emit.File) error {
			f.Name = path.Join(t.Dir, f.Name)
			return fn(f)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
