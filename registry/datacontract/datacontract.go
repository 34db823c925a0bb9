// Package datacontract holds the parts of Confluent's data contracts the
// registry stores: a schema version's metadata and rule set, and the
// fields of a subject's (or the registry's) config beyond the
// compatibility level. It validates them as Confluent's registry does (with
// stricter rule actions), merges them with Confluent's rules, and gives
// each one canonical JSON form, so that two spellings of one metadata are
// one stored value.
//
// It imports nothing of the store or the HTTP server: the registry's
// client and the CLI use the same types.
package datacontract

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
)

// Metadata is a schema version's metadata: tags by field path,
// free-form properties, and the names of properties that are sensitive.
type Metadata struct {
	Tags       map[string][]string `json:"tags,omitempty"`
	Properties map[string]string   `json:"properties,omitempty"`
	Sensitive  []string            `json:"sensitive,omitempty"`
}

// VersionProperty is the metadata property Confluent's registry sets to a
// version's number when the registration gives a version or the metadata
// already has it.
const VersionProperty = "confluent:version"

// Rule is one data-contract rule.
type Rule struct {
	Name      string            `json:"name"`
	Doc       string            `json:"doc,omitempty"`
	Kind      string            `json:"kind"`
	Mode      string            `json:"mode"`
	Type      string            `json:"type"`
	Tags      []string          `json:"tags,omitempty"`
	Params    map[string]string `json:"params,omitempty"`
	Expr      string            `json:"expr,omitempty"`
	OnSuccess string            `json:"onSuccess,omitempty"`
	OnFailure string            `json:"onFailure,omitempty"`
	Disabled  bool              `json:"disabled"`
}

// RuleSet is a schema version's rules: migration rules run between
// versions (UPGRADE, DOWNGRADE, UPDOWN), domain and encoding rules when a
// client writes or reads (WRITE, READ, WRITEREAD).
type RuleSet struct {
	MigrationRules []Rule `json:"migrationRules,omitempty"`
	DomainRules    []Rule `json:"domainRules,omitempty"`
	EncodingRules  []Rule `json:"encodingRules,omitempty"`
}

// Rule kinds, modes and actions.
const (
	KindCondition = "CONDITION"
	KindTransform = "TRANSFORM"

	ModeUpgrade   = "UPGRADE"
	ModeDowngrade = "DOWNGRADE"
	ModeUpDown    = "UPDOWN"
	ModeWrite     = "WRITE"
	ModeRead      = "READ"
	ModeWriteRead = "WRITEREAD"

	ActionNone  = "NONE"
	ActionError = "ERROR"
	ActionDLQ   = "DLQ"
)

// nameMax is the longest rule name Confluent accepts.
const nameMax = 64

// Empty reports whether m holds nothing.
func (m *Metadata) Empty() bool {
	return m == nil || (len(m.Tags) == 0 && len(m.Properties) == 0 && len(m.Sensitive) == 0)
}

// Empty reports whether rs holds no rule.
func (rs *RuleSet) Empty() bool {
	return rs == nil || (len(rs.MigrationRules) == 0 && len(rs.DomainRules) == 0 && len(rs.EncodingRules) == 0)
}

// Canonical returns m with tags and sensitive names sorted and without
// duplicates and empty parts dropped; nil when m is empty.
func (m *Metadata) Canonical() *Metadata {
	if m.Empty() {
		return nil
	}
	out := &Metadata{}
	if len(m.Tags) > 0 {
		out.Tags = make(map[string][]string, len(m.Tags))
		for k, v := range m.Tags {
			if v = sortedSet(v); len(v) > 0 {
				out.Tags[k] = v
			}
		}
		if len(out.Tags) == 0 {
			out.Tags = nil
		}
	}
	if len(m.Properties) > 0 {
		out.Properties = maps.Clone(m.Properties)
	}
	out.Sensitive = sortedSet(m.Sensitive)
	if out.Empty() {
		return nil
	}
	return out
}

func sortedSet(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// Canonical returns rs with each rule's defaults filled in (kind
// TRANSFORM, mode WRITEREAD, as Confluent's registry fills them) and its
// tags sorted; nil when rs has no rule.
func (rs *RuleSet) Canonical() *RuleSet {
	if rs.Empty() {
		return nil
	}
	return &RuleSet{
		MigrationRules: canonicalRules(rs.MigrationRules),
		DomainRules:    canonicalRules(rs.DomainRules),
		EncodingRules:  canonicalRules(rs.EncodingRules),
	}
}

func canonicalRules(rules []Rule) []Rule {
	if len(rules) == 0 {
		return nil
	}
	out := make([]Rule, len(rules))
	for i, r := range rules {
		if r.Kind == "" {
			r.Kind = KindTransform
		}
		if r.Mode == "" {
			r.Mode = ModeWriteRead
		}
		r.Tags = sortedSet(r.Tags)
		if len(r.Params) == 0 {
			r.Params = nil
		} else {
			r.Params = maps.Clone(r.Params)
		}
		out[i] = r
	}
	return out
}

// Validate reports the first thing wrong with rs, in words a client can
// act on: a rule without a name or type, a duplicate name, an unknown
// kind, mode or action, a mode of the wrong list.
func (rs *RuleSet) Validate() error {
	if rs == nil {
		return nil
	}
	seen := map[string]bool{}
	lists := []struct {
		name  string
		rules []Rule
		modes []string
	}{
		{"migrationRules", rs.MigrationRules, []string{ModeUpgrade, ModeDowngrade, ModeUpDown}},
		{"domainRules", rs.DomainRules, []string{ModeWrite, ModeRead, ModeWriteRead}},
		{"encodingRules", rs.EncodingRules, []string{ModeWrite, ModeRead, ModeWriteRead}},
	}
	for _, l := range lists {
		for i, r := range l.rules {
			where := fmt.Sprintf("%s[%d]", l.name, i)
			if r.Name != "" {
				where = fmt.Sprintf("%s[%d] %q", l.name, i, r.Name)
			}
			if err := validName(r.Name); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			if seen[r.Name] {
				return fmt.Errorf("%s: another rule of the rule set has the name %q; rule names must be unique", where, r.Name)
			}
			seen[r.Name] = true
			if strings.TrimSpace(r.Type) == "" {
				return fmt.Errorf("%s: missing rule type (e.g. CEL, CEL_FIELD, JSONATA, ENCRYPT)", where)
			}
			switch r.Kind {
			case "", KindCondition, KindTransform:
			default:
				return fmt.Errorf("%s: unknown kind %q; use CONDITION or TRANSFORM", where, r.Kind)
			}
			mode := r.Mode
			if mode == "" {
				mode = ModeWriteRead
			}
			if !slices.Contains(l.modes, mode) {
				all := []string{ModeUpgrade, ModeDowngrade, ModeUpDown, ModeWrite, ModeRead, ModeWriteRead}
				if !slices.Contains(all, mode) {
					return fmt.Errorf("%s: unknown mode %q; use one of %s", where, r.Mode, strings.Join(all, ", "))
				}
				return fmt.Errorf("%s: mode %s is not allowed in %s, which take %s", where, mode, l.name, strings.Join(l.modes, ", "))
			}
			for _, a := range []struct{ field, value string }{{"onSuccess", r.OnSuccess}, {"onFailure", r.OnFailure}} {
				if err := validAction(mode, a.value); err != nil {
					return fmt.Errorf("%s: %s: %v", where, a.field, err)
				}
			}
		}
	}
	return nil
}

func validName(name string) error {
	if name == "" {
		return fmt.Errorf("missing rule name")
	}
	if len([]rune(name)) > nameMax {
		return fmt.Errorf("rule name longer than %d characters", nameMax)
	}
	for i, c := range name {
		switch {
		case unicode.IsLetter(c) || c == '_':
		case i > 0 && (unicode.IsDigit(c) || c == '-'):
		default:
			return fmt.Errorf("rule name %q: a name starts with a letter or '_' and has only letters, digits, '_' and '-'", name)
		}
	}
	return nil
}

// validAction checks an onSuccess or onFailure value: NONE, ERROR or DLQ,
// or for WRITEREAD and UPDOWN a pair "write,read" of them.
func validAction(mode, action string) error {
	if action == "" {
		return nil
	}
	parts := strings.Split(action, ",")
	if len(parts) > 2 || (len(parts) == 2 && mode != ModeWriteRead && mode != ModeUpDown) {
		return fmt.Errorf("%q: a pair of actions is allowed only with mode WRITEREAD or UPDOWN, one action otherwise", action)
	}
	for _, p := range parts {
		switch strings.TrimSpace(p) {
		case ActionNone, ActionError, ActionDLQ:
		default:
			return fmt.Errorf("unknown action %q; use NONE, ERROR or DLQ", strings.TrimSpace(p))
		}
	}
	return nil
}

// MergeMetadata is Confluent's merge of metadata: tags and properties of
// newer replace older ones of the same key, sensitive names are united.
// Either may be nil.
func MergeMetadata(older, newer *Metadata) *Metadata {
	if older == nil {
		return newer
	}
	if newer == nil {
		return older
	}
	out := &Metadata{
		Tags:       mergeMap(older.Tags, newer.Tags),
		Properties: mergeMap(older.Properties, newer.Properties),
		Sensitive:  sortedSet(append(slices.Clone(older.Sensitive), newer.Sensitive...)),
	}
	return out
}

func mergeMap[V any](older, newer map[string]V) map[string]V {
	if len(older) == 0 {
		return newer
	}
	if len(newer) == 0 {
		return older
	}
	out := maps.Clone(older)
	maps.Copy(out, newer)
	return out
}

// MergeRuleSets is Confluent's merge of rule sets, list by list: the
// older rules whose names no newer rule has, then the newer rules.
func MergeRuleSets(older, newer *RuleSet) *RuleSet {
	if older == nil {
		return newer
	}
	if newer == nil {
		return older
	}
	return &RuleSet{
		MigrationRules: mergeRules(older.MigrationRules, newer.MigrationRules),
		DomainRules:    mergeRules(older.DomainRules, newer.DomainRules),
		EncodingRules:  mergeRules(older.EncodingRules, newer.EncodingRules),
	}
}

func mergeRules(older, newer []Rule) []Rule {
	if len(older) == 0 {
		return newer
	}
	if len(newer) == 0 {
		return older
	}
	names := map[string]bool{}
	for _, r := range newer {
		names[r.Name] = true
	}
	var out []Rule
	for _, r := range older {
		if !names[r.Name] {
			out = append(out, r)
		}
	}
	return append(out, newer...)
}

// Encode returns v's canonical JSON ("" for nil): the form stored and
// compared.
func Encode[T any](v *T) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain structs of strings, maps and slices
	}
	return string(b)
}

// Decode reads what Encode wrote; nil for "".
func Decode[T any](s string) (*T, error) {
	if s == "" {
		return nil, nil
	}
	v := new(T)
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return nil, err
	}
	return v, nil
}
