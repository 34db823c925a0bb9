package console

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/msgcontract/msgcontract/registry/datacontract"
	"github.com/msgcontract/msgcontract/registry/store"
)

// contractChange is one difference in the data contracts of two versions:
// a rule (by name) or a metadata property (by key) added, removed or
// changed.
type contractChange struct {
	// What is "rule" or "property"; Change "added", "removed" or "changed".
	What, Name, Change string
	// Old and New are the rule (as JSON) or property value on each side.
	Old, New string
}

// contractChanges lists how to's rules and metadata properties differ from
// from's, rules first, each sorted by name.
func contractChanges(from, to store.Schema) []contractChange {
	rules := func(sc store.Schema) map[string]string {
		out := map[string]string{}
		rs, _ := datacontract.Decode[datacontract.RuleSet](sc.RuleSet)
		if rs == nil {
			return out
		}
		for _, list := range [][]datacontract.Rule{rs.DomainRules, rs.MigrationRules, rs.EncodingRules} {
			for _, r := range list {
				var b strings.Builder
				enc := json.NewEncoder(&b)
				enc.SetEscapeHTML(false) // the template escapes
				_ = enc.Encode(r)
				out[r.Name] = strings.TrimSpace(b.String())
			}
		}
		return out
	}
	props := func(sc store.Schema) map[string]string {
		md, _ := datacontract.Decode[datacontract.Metadata](sc.Metadata)
		if md == nil || md.Properties == nil {
			return map[string]string{}
		}
		return md.Properties
	}
	var out []contractChange
	for _, kind := range []struct {
		what     string
		old, new map[string]string
	}{{"rule", rules(from), rules(to)}, {"property", props(from), props(to)}} {
		var names []string
		for n := range kind.old {
			names = append(names, n)
		}
		for n := range kind.new {
			if _, ok := kind.old[n]; !ok {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			o, inOld := kind.old[n]
			nw, inNew := kind.new[n]
			switch {
			case !inOld:
				out = append(out, contractChange{kind.what, n, "added", "", nw})
			case !inNew:
				out = append(out, contractChange{kind.what, n, "removed", o, ""})
			case o != nw:
				out = append(out, contractChange{kind.what, n, "changed", o, nw})
			}
		}
	}
	return out
}
