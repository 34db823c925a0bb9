package console

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// diffContext is how many unchanged lines are kept around a change; longer
// unchanged runs fold into one "n unchanged lines" row.
const diffContext = 3

type diffLine struct {
	// Kind is "same", "del", "add" or "fold".
	Kind       string
	Old, New   int
	HTML       template.HTML
	Folded     int
	Violations []compat.Violation
}

// diffTable is what the difftable template renders; AllURL, when set,
// is the same view with nothing folded.
type diffTable struct {
	Lines  []diffLine
	AllURL string
}

type diffData struct {
	Subject    string
	From, To   int
	Versions   []int
	Level      compat.Level
	Checked    compat.Level
	Table      diffTable
	Violations []compat.Violation
	// Elsewhere are violations positioned outside the shown file.
	Elsewhere []compat.Violation
	Changed   bool
	// Contract lists the differences of the versions' data-contract rules
	// and metadata properties.
	Contract []contractChange
}

// diff shows the line diff of two versions (?from=&to=, default the two
// latest) with every violation of the subject's level inline at the line
// of the newer version it points to.
func (c *Console) diff(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := r.URL.Query().Get("s")
	all, err := c.cfg.Store.Versions(ctx, name, true)
	if err != nil {
		c.storeFail(w, r, err, "subject "+strconv.Quote(name))
		return
	}
	d := diffData{Subject: name}
	for _, v := range all {
		d.Versions = append(d.Versions, v.Version)
	}
	pick := func(key string, def int) (store.Version, bool) {
		n := def
		if raw := r.URL.Query().Get(key); raw != "" {
			if n, err = versionArg(raw); err != nil {
				c.fail(w, r, http.StatusBadRequest, "%s: %v", key, err)
				return store.Version{}, false
			}
		}
		if n == subjectref.Latest {
			return all[len(all)-1], true
		}
		for _, v := range all {
			if v.Version == n {
				return v, true
			}
		}
		c.fail(w, r, http.StatusNotFound, "subject %s has no version %d; its versions are %v", name, n, d.Versions)
		return store.Version{}, false
	}
	defFrom := all[0].Version
	if len(all) > 1 {
		defFrom = all[len(all)-2].Version
	}
	from, ok := pick("from", defFrom)
	if !ok {
		return
	}
	to, ok := pick("to", subjectref.Latest)
	if !ok {
		return
	}
	d.From, d.To = from.Version, to.Version
	if d.Level, _, err = c.levelOf(ctx, name); err != nil {
		c.storeFail(w, r, err, "reading the level of "+name)
		return
	}
	// Transitive levels compare pairwise here: this is one pair.
	d.Checked = map[compat.Level]compat.Level{compat.BackwardTransitive: compat.Backward, compat.ForwardTransitive: compat.Forward,
		compat.FullTransitive: compat.Full, compat.None: compat.Full}[d.Level]
	if d.Checked == "" {
		d.Checked = d.Level
	}
	oldP, err := c.compile(ctx, name, from.Schema)
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "%v", err)
		return
	}
	newP, err := c.compile(ctx, name, to.Schema)
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "%v", err)
		return
	}
	d.Violations = compat.CheckPrepared(compat.PrepareClosure(oldP.Set), compat.PrepareClosure(newP.Set), d.Checked.Directions())
	d.Table.Lines, d.Elsewhere = diffLines(from.Schema.Text, to.Schema.Text, subjectref.FileName(name), d.Violations)
	if r.URL.Query().Get("all") != "" {
		d.Table.Lines = unfold(from.Schema.Text, to.Schema.Text, subjectref.FileName(name), d.Violations)
	} else {
		d.Table.AllURL = "/ui/diff?s=" + url.QueryEscape(name) + "&from=" + strconv.Itoa(d.From) + "&to=" + strconv.Itoa(d.To) + "&all=1"
	}
	d.Changed = from.Schema.Text != to.Schema.Text
	d.Contract = contractChanges(from.Schema, to.Schema)
	c.render(w, r, http.StatusOK, "diff", name+" v"+strconv.Itoa(d.From)+"→v"+strconv.Itoa(d.To), "subjects", d)
}

// unfold is diffLines without folding.
func unfold(oldText, newText, file string, vs []compat.Violation) []diffLine {
	all, _ := lineDiff(oldText, newText, file, vs)
	return all
}

// diffLines diffs two texts by line and hangs each violation under the
// new-side line it points to; violations in file whose line is not shown
// are returned as elsewhere.
func diffLines(oldText, newText, file string, vs []compat.Violation) (lines []diffLine, elsewhere []compat.Violation) {
	all, elsewhere := lineDiff(oldText, newText, file, vs)
	return fold(all), elsewhere
}

func lineDiff(oldText, newText, file string, vs []compat.Violation) (all []diffLine, elsewhere []compat.Violation) {
	a := strings.Split(strings.TrimRight(oldText, "\n"), "\n")
	b := strings.Split(strings.TrimRight(newText, "\n"), "\n")
	ha, hb := highlight(oldText), highlight(newText)
	at := map[int][]compat.Violation{}
	for _, v := range vs {
		if v.Pos.File == file && v.Pos.Line >= 1 && v.Pos.Line <= len(b) {
			at[v.Pos.Line] = append(at[v.Pos.Line], v)
		} else {
			elsewhere = append(elsewhere, v)
		}
	}
	for _, op := range difflib.NewMatcher(a, b).GetOpCodes() {
		switch op.Tag {
		case 'e':
			for k := 0; k < op.I2-op.I1; k++ {
				all = append(all, diffLine{Kind: "same", Old: op.I1 + k + 1, New: op.J1 + k + 1, HTML: hb[op.J1+k], Violations: at[op.J1+k+1]})
			}
		default: // 'r', 'd', 'i'
			for i := op.I1; i < op.I2; i++ {
				all = append(all, diffLine{Kind: "del", Old: i + 1, HTML: ha[i]})
			}
			for j := op.J1; j < op.J2; j++ {
				all = append(all, diffLine{Kind: "add", New: j + 1, HTML: hb[j], Violations: at[j+1]})
			}
		}
	}
	return all, elsewhere
}

// fold keeps diffContext unchanged lines around every change or violation
// and replaces longer unchanged runs by one fold row.
func fold(all []diffLine) []diffLine {
	keep := make([]bool, len(all))
	for i, l := range all {
		if l.Kind != "same" || len(l.Violations) > 0 {
			for k := max(0, i-diffContext); k <= min(len(all)-1, i+diffContext); k++ {
				keep[k] = true
			}
		}
	}
	var out []diffLine
	for i := 0; i < len(all); {
		if keep[i] {
			out = append(out, all[i])
			i++
			continue
		}
		j := i
		for j < len(all) && !keep[j] {
			j++
		}
		if j-i <= 2 { // a fold row hiding one or two lines saves nothing
			out = append(out, all[i:j]...)
		} else {
			out = append(out, diffLine{Kind: "fold", Folded: j - i, Old: all[i].Old, New: all[i].New})
		}
		i = j
	}
	return out
}
