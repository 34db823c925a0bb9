package datacontract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Settings are the fields of Confluent's config other than the
// compatibility level, as stored with it.
type Settings struct {
	Alias              string    `json:"alias,omitempty"`
	Normalize          *bool     `json:"normalize,omitempty"`
	ValidateFields     *bool     `json:"validateFields,omitempty"`
	ValidateRules      *bool     `json:"validateRules,omitempty"`
	CompatibilityGroup string    `json:"compatibilityGroup,omitempty"`
	DefaultMetadata    *Metadata `json:"defaultMetadata,omitempty"`
	OverrideMetadata   *Metadata `json:"overrideMetadata,omitempty"`
	DefaultRuleSet     *RuleSet  `json:"defaultRuleSet,omitempty"`
	OverrideRuleSet    *RuleSet  `json:"overrideRuleSet,omitempty"`
}

// Config is a config as GET /config answers it: the level as
// compatibilityLevel, beside the settings.
type Config struct {
	Alias              string    `json:"alias,omitempty"`
	Normalize          *bool     `json:"normalize,omitempty"`
	ValidateFields     *bool     `json:"validateFields,omitempty"`
	ValidateRules      *bool     `json:"validateRules,omitempty"`
	CompatibilityLevel string    `json:"compatibilityLevel,omitempty"`
	CompatibilityGroup string    `json:"compatibilityGroup,omitempty"`
	DefaultMetadata    *Metadata `json:"defaultMetadata,omitempty"`
	OverrideMetadata   *Metadata `json:"overrideMetadata,omitempty"`
	DefaultRuleSet     *RuleSet  `json:"defaultRuleSet,omitempty"`
	OverrideRuleSet    *RuleSet  `json:"overrideRuleSet,omitempty"`
}

// UpdateAnswer is a config as PUT /config answers it, in the form of
// Confluent's update request: the level as compatibility.
type UpdateAnswer struct {
	Alias              string    `json:"alias,omitempty"`
	Normalize          *bool     `json:"normalize,omitempty"`
	ValidateFields     *bool     `json:"validateFields,omitempty"`
	ValidateRules      *bool     `json:"validateRules,omitempty"`
	Compatibility      string    `json:"compatibility,omitempty"`
	CompatibilityGroup string    `json:"compatibilityGroup,omitempty"`
	DefaultMetadata    *Metadata `json:"defaultMetadata,omitempty"`
	OverrideMetadata   *Metadata `json:"overrideMetadata,omitempty"`
	DefaultRuleSet     *RuleSet  `json:"defaultRuleSet,omitempty"`
	OverrideRuleSet    *RuleSet  `json:"overrideRuleSet,omitempty"`
}

// Full is the config of level and settings.
func Full(level string, s Settings) Config {
	return Config{
		Alias: s.Alias, Normalize: s.Normalize, ValidateFields: s.ValidateFields, ValidateRules: s.ValidateRules,
		CompatibilityLevel: level, CompatibilityGroup: s.CompatibilityGroup,
		DefaultMetadata: s.DefaultMetadata, OverrideMetadata: s.OverrideMetadata,
		DefaultRuleSet: s.DefaultRuleSet, OverrideRuleSet: s.OverrideRuleSet,
	}
}

// Answer is c in the form of an update request.
func (c Config) Answer() UpdateAnswer {
	return UpdateAnswer{
		Alias: c.Alias, Normalize: c.Normalize, ValidateFields: c.ValidateFields, ValidateRules: c.ValidateRules,
		Compatibility: c.CompatibilityLevel, CompatibilityGroup: c.CompatibilityGroup,
		DefaultMetadata: c.DefaultMetadata, OverrideMetadata: c.OverrideMetadata,
		DefaultRuleSet: c.DefaultRuleSet, OverrideRuleSet: c.OverrideRuleSet,
	}
}

// ParseSettings reads stored settings ("" is none).
func ParseSettings(stored string) (Settings, error) {
	var s Settings
	if stored == "" {
		return s, nil
	}
	err := json.Unmarshal([]byte(stored), &s)
	return s, err
}

// Encode is s's stored form: "" when s sets nothing.
func (s Settings) Encode() string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	if string(b) == "{}" {
		return ""
	}
	return string(b)
}

// UpdateError is a config update that cannot be applied; Field names
// the field at fault.
type UpdateError struct {
	Field string
	// RuleSet reports an invalid rule set (Confluent's 42210), as opposed
	// to a malformed field.
	RuleSet bool
	Msg     string
}

func (e *UpdateError) Error() string { return e.Msg }

// Update applies a PUT /config body to the stored level and settings, as
// Confluent's registry does: a field the body gives replaces the stored
// one, null removes it, a field it leaves out is kept. The level may be
// given as compatibility (Confluent's update request) or
// compatibilityLevel (its config); it is returned as given, for the
// caller to parse. A field this registry does not know is an error, not
// dropped.
func Update(level string, cur Settings, body []byte) (string, Settings, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return "", cur, &UpdateError{Msg: fmt.Sprintf("the body is not a JSON object: %v", err)}
	}
	known := []string{"compatibility", "compatibilityLevel", "alias", "normalize", "validateFields", "validateRules",
		"compatibilityGroup", "defaultMetadata", "overrideMetadata", "defaultRuleSet", "overrideRuleSet"}
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !slices.Contains(known, k) {
			return "", cur, &UpdateError{Field: k, Msg: fmt.Sprintf("unknown config field %q; this registry stores %s", k, strings.Join(known, ", "))}
		}
	}
	next := cur
	isNull := func(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }
	set := func(name string, dst any) error {
		raw, ok := fields[name]
		if !ok {
			return nil
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			return &UpdateError{Field: name, Msg: fmt.Sprintf("config field %q: %v", name, err)}
		}
		return nil
	}
	var a, b *string
	if err := set("compatibility", &a); err != nil {
		return "", cur, err
	}
	if err := set("compatibilityLevel", &b); err != nil {
		return "", cur, err
	}
	switch {
	case a != nil && b != nil && *a != *b:
		return "", cur, &UpdateError{Field: "compatibility", Msg: fmt.Sprintf("compatibility %q and compatibilityLevel %q disagree; send one of them", *a, *b)}
	case a != nil:
		level = *a
	case b != nil:
		level = *b
	case isNull(fields["compatibility"]) || isNull(fields["compatibilityLevel"]):
		level = ""
	}
	strField := func(name string, dst *string) error {
		var v *string
		if err := set(name, &v); err != nil {
			return err
		}
		if _, ok := fields[name]; ok {
			*dst = ""
			if v != nil {
				*dst = *v
			}
		}
		return nil
	}
	if err := strField("alias", &next.Alias); err != nil {
		return "", cur, err
	}
	if err := strField("compatibilityGroup", &next.CompatibilityGroup); err != nil {
		return "", cur, err
	}
	for name, dst := range map[string]**bool{"normalize": &next.Normalize, "validateFields": &next.ValidateFields, "validateRules": &next.ValidateRules} {
		if _, ok := fields[name]; ok {
			*dst = nil
			if err := set(name, dst); err != nil {
				return "", cur, err
			}
		}
	}
	for name, dst := range map[string]**Metadata{"defaultMetadata": &next.DefaultMetadata, "overrideMetadata": &next.OverrideMetadata} {
		if _, ok := fields[name]; ok {
			*dst = nil
			if err := set(name, dst); err != nil {
				return "", cur, err
			}
			*dst = (*dst).Canonical()
		}
	}
	for name, dst := range map[string]**RuleSet{"defaultRuleSet": &next.DefaultRuleSet, "overrideRuleSet": &next.OverrideRuleSet} {
		if _, ok := fields[name]; ok {
			*dst = nil
			if err := set(name, dst); err != nil {
				return "", cur, err
			}
			if err := (*dst).Validate(); err != nil {
				return "", cur, &UpdateError{Field: name, RuleSet: true, Msg: fmt.Sprintf("%s: %v", name, err)}
			}
			*dst = (*dst).Canonical()
		}
	}
	return level, next, nil
}
