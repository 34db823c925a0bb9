package console

import (
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/msgcontract/msgcontract/registry/access"
	"github.com/msgcontract/msgcontract/registry/compat"
	"github.com/msgcontract/msgcontract/registry/datacontract"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

type subjectRow struct {
	Name      string
	Versions  int
	Latest    int
	SchemaID  int64
	Level     compat.Level
	LevelFrom string
}

type subjectsData struct {
	Query, Prefix    string
	Total, Matched   int
	Page, Pages      int
	From, To         int
	Rows             []subjectRow
	GlobalLevel      compat.Level
	GlobalFrom       string
	PrevURL, NextURL string
	Prefixes         []string
}

// subjects lists subjects matching ?q= (a substring, any case) and
// ?prefix=, a page (?page=) at a time; only the shown page's subjects are
// read beyond their names, so 10,000 subjects list as fast as 50.
func (c *Console) subjects(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	all, err := c.cfg.Store.Subjects(ctx, false)
	if err != nil {
		c.storeFail(w, r, err, "listing subjects")
		return
	}
	// Only the subjects the principal may read are listed.
	p := access.FromContext(ctx)
	names := all[:0]
	for _, n := range all {
		if p == nil || p.Can(access.Reader, n) {
			names = append(names, n)
		}
	}
	d := subjectsData{Query: r.URL.Query().Get("q"), Prefix: r.URL.Query().Get("prefix"), Total: len(names)}
	d.Prefixes = prefixes(names, 12)
	q := strings.ToLower(d.Query)
	var match []string
	for _, n := range names {
		if strings.HasPrefix(n, d.Prefix) && strings.Contains(strings.ToLower(n), q) {
			match = append(match, n)
		}
	}
	d.Matched = len(match)
	size := c.cfg.PageSize
	d.Pages = max(1, (len(match)+size-1)/size)
	d.Page, _ = strconv.Atoi(r.URL.Query().Get("page"))
	d.Page = min(max(d.Page, 1), d.Pages)
	lo, hi := (d.Page-1)*size, min(d.Page*size, len(match))
	d.From, d.To = lo+1, hi
	for _, n := range match[lo:hi] {
		vs, err := c.cfg.Store.Versions(ctx, n, false)
		if err != nil {
			c.storeFail(w, r, err, "reading subject "+n)
			return
		}
		last := vs[len(vs)-1]
		level, from, err := c.levelOf(ctx, n)
		if err != nil {
			c.storeFail(w, r, err, "reading the level of "+n)
			return
		}
		d.Rows = append(d.Rows, subjectRow{Name: n, Versions: len(vs), Latest: last.Version, SchemaID: last.Schema.ID, Level: level, LevelFrom: from})
	}
	if d.GlobalLevel, d.GlobalFrom, err = c.levelOf(ctx, store.GlobalSubject); err != nil {
		c.storeFail(w, r, err, "reading the global level")
		return
	}
	link := func(p int) string {
		return "/ui/?q=" + url.QueryEscape(d.Query) + "&prefix=" + url.QueryEscape(d.Prefix) + "&page=" + strconv.Itoa(p)
	}
	if d.Page > 1 {
		d.PrevURL = link(d.Page - 1)
	}
	if d.Page < d.Pages {
		d.NextURL = link(d.Page + 1)
	}
	c.render(w, r, http.StatusOK, "subjects", "Subjects", "subjects", d)
}

// prefixes are the most common leading segments of subject names (up to
// the first '.', '-', '/' or '_'), offered as one-click filters.
func prefixes(names []string, n int) []string {
	count := map[string]int{}
	var order []string
	for _, s := range names {
		i := strings.IndexAny(s, ".-/_")
		if i <= 0 {
			continue
		}
		p := s[:i+1]
		if count[p] == 0 {
			order = append(order, p)
		}
		count[p]++
	}
	var out []string
	for _, p := range order {
		if count[p] > 1 || len(order) <= n {
			out = append(out, p)
		}
		if len(out) == n {
			break
		}
	}
	return out
}

type versionRow struct {
	Version  int
	SchemaID int64
	Deleted  bool
	Refs     int
	Lines    int
}

type subjectData struct {
	Subject   string
	Level     compat.Level
	LevelFrom string
	Versions  []versionRow
	Latest    int
	Previous  int
}

// subject lists a subject's versions, soft-deleted ones included and
// marked.
func (c *Console) subject(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	name := r.URL.Query().Get("s")
	vs, err := c.cfg.Store.Versions(ctx, name, true)
	if err != nil {
		c.storeFail(w, r, err, "subject "+strconv.Quote(name))
		return
	}
	d := subjectData{Subject: name}
	if d.Level, d.LevelFrom, err = c.levelOf(ctx, name); err != nil {
		c.storeFail(w, r, err, "reading the level of "+name)
		return
	}
	for _, v := range vs {
		d.Versions = append(d.Versions, versionRow{v.Version, v.Schema.ID, v.Deleted, len(v.Schema.References), strings.Count(strings.TrimRight(v.Schema.Text, "\n"), "\n") + 1})
		if !v.Deleted {
			d.Previous, d.Latest = d.Latest, v.Version
		}
	}
	c.render(w, r, http.StatusOK, "subject", name, "subjects", d)
}

type refRow struct {
	Name, Subject string
	Version       int
}

type versionData struct {
	Subject    string
	Version    int
	SchemaID   int64
	Deleted    bool
	Lines      []template.HTML
	References []refRow
	Versions   []int
	Previous   int
	// Registered says the check form just registered this version.
	Registered bool
	// Metadata and Rules are the version's data contract.
	Metadata *datacontract.Metadata
	Rules    []ruleRow
}

// ruleRow is one rule of a version's rule set, with the list it is in.
type ruleRow struct {
	List string
	datacontract.Rule
}

// contractRows reads a stored metadata and rule set for the version page;
// unreadable ones (never written so) are shown as none.
func contractRows(sc store.Schema) (*datacontract.Metadata, []ruleRow) {
	md, _ := datacontract.Decode[datacontract.Metadata](sc.Metadata)
	rs, _ := datacontract.Decode[datacontract.RuleSet](sc.RuleSet)
	var rows []ruleRow
	if rs != nil {
		for _, l := range []struct {
			name  string
			rules []datacontract.Rule
		}{{"domain", rs.DomainRules}, {"migration", rs.MigrationRules}, {"encoding", rs.EncodingRules}} {
			for _, r := range l.rules {
				rows = append(rows, ruleRow{l.name, r})
			}
		}
	}
	return md, rows
}

// version shows one version's schema, highlighted, with its references.
func (c *Console) version(w http.ResponseWriter, r *http.Request) {
	name, v, all, ok := c.pickVersion(w, r)
	if !ok {
		return
	}
	d := versionData{Subject: name, Version: v.Version, SchemaID: v.Schema.ID, Deleted: v.Deleted, Lines: highlight(v.Schema.Text),
		Registered: r.URL.Query().Get("registered") != ""}
	for _, o := range all {
		d.Versions = append(d.Versions, o.Version)
		if o.Version < v.Version {
			d.Previous = o.Version
		}
	}
	for _, ref := range v.Schema.References {
		d.References = append(d.References, refRow{ref.Name, ref.Subject, ref.Version})
	}
	d.Metadata, d.Rules = contractRows(v.Schema)
	c.render(w, r, http.StatusOK, "version", name+" v"+strconv.Itoa(v.Version), "subjects", d)
}

// pickVersion reads ?s= and ?v= (a number or "latest"; soft-deleted
// versions included) and returns the version with all of the subject's
// version numbers. On failure it has answered with an error page.
func (c *Console) pickVersion(w http.ResponseWriter, r *http.Request) (string, store.Version, []store.Version, bool) {
	name := r.URL.Query().Get("s")
	n, err := versionArg(r.URL.Query().Get("v"))
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, "%v", err)
		return name, store.Version{}, nil, false
	}
	all, err := c.cfg.Store.Versions(r.Context(), name, true)
	if err != nil {
		c.storeFail(w, r, err, "subject "+strconv.Quote(name))
		return name, store.Version{}, nil, false
	}
	if n == subjectref.Latest {
		for i := len(all) - 1; i >= 0; i-- {
			if !all[i].Deleted {
				return name, all[i], all, true
			}
		}
	}
	for _, v := range all {
		if v.Version == n {
			return name, v, all, true
		}
	}
	c.fail(w, r, http.StatusNotFound, "subject %s: version %s not found", name, r.URL.Query().Get("v"))
	return name, store.Version{}, nil, false
}
