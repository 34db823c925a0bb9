package datacontract

import (
	"strings"
	"testing"
)

func TestMergeAsConfluent(t *testing.T) {
	older := &Metadata{Properties: map[string]string{"a": "1", "b": "1"}, Tags: map[string][]string{"f": {"X"}}, Sensitive: []string{"a"}}
	newer := &Metadata{Properties: map[string]string{"b": "2"}, Tags: map[string][]string{"f": {"Y"}, "g": {"Z"}}, Sensitive: []string{"b"}}
	got := Encode(MergeMetadata(older, newer).Canonical())
	if want := `{"tags":{"f":["Y"],"g":["Z"]},"properties":{"a":"1","b":"2"},"sensitive":["a","b"]}`; got != want {
		t.Errorf("metadata %s, want %s", got, want)
	}
	rs := MergeRuleSets(
		&RuleSet{DomainRules: []Rule{{Name: "a", Expr: "old"}, {Name: "b", Expr: "old"}}, MigrationRules: []Rule{{Name: "m"}}},
		&RuleSet{DomainRules: []Rule{{Name: "a", Expr: "new"}, {Name: "c"}}})
	var names []string
	for _, r := range rs.DomainRules {
		names = append(names, r.Name+"="+r.Expr)
	}
	if got := strings.Join(names, " "); got != "b=old a=new c=" || len(rs.MigrationRules) != 1 {
		t.Errorf("rules %s, migration %v", got, rs.MigrationRules)
	}
	if MergeMetadata(nil, newer) != newer || MergeRuleSets(rs, nil) != rs {
		t.Error("a nil side is the other one")
	}
}

func TestUpdateKeepsReplacesRemoves(t *testing.T) {
	level, set, err := Update("", Settings{}, []byte(`{"compatibility":"FULL","alias":"x","normalize":true}`))
	if err != nil || level != "FULL" || set.Alias != "x" || set.Normalize == nil || !*set.Normalize {
		t.Fatalf("first update: %q %+v %v", level, set, err)
	}
	level, set, err = Update(level, set, []byte(`{"alias":null,"validateFields":false}`))
	if err != nil || level != "FULL" || set.Alias != "" || set.Normalize == nil || set.ValidateFields == nil || *set.ValidateFields {
		t.Fatalf("second update: %q %+v %v", level, set, err)
	}
	if _, _, err := Update("", Settings{}, []byte(`{"compatibility":null}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Update("", Settings{}, []byte(`{"bogus":1}`)); err == nil || !strings.Contains(err.Error(), `"bogus"`) {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestValidateNamesTheRule(t *testing.T) {
	for rs, want := range map[*RuleSet]string{
		{DomainRules: []Rule{{Name: "a", Type: "CEL", Kind: "MAYBE"}}}:                        `domainRules[0] "a": unknown kind "MAYBE"`,
		{DomainRules: []Rule{{Name: "a", Type: "CEL"}, {Name: "a", Type: "CEL"}}}:             `domainRules[1] "a": another rule`,
		{MigrationRules: []Rule{{Name: "m", Type: "JSONATA", Mode: "READ"}}}:                  `mode READ is not allowed in migrationRules`,
		{DomainRules: []Rule{{Name: "a", Type: "CEL", Mode: "WRITE", OnFailure: "DLQ,NONE"}}}: `a pair of actions`,
		{DomainRules: []Rule{{Name: "a.b", Type: "CEL"}}}:                                     `rule name "a.b"`,
		{DomainRules: []Rule{{Name: "a"}}}:                                                    `missing rule type`,
	} {
		if err := rs.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", rs, err, want)
		}
	}
}
