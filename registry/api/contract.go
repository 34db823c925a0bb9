package api

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/msgcontract/msgcontract/registry/datacontract"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// rawJSON is a stored canonical JSON value as it goes into an answer; nil
// (left out) for none.
func rawJSON(stored string) json.RawMessage {
	if stored == "" {
		return nil
	}
	return json.RawMessage(stored)
}

// contract is a schema's metadata and rule set in their stored form.
type contract struct{ metadata, ruleSet string }

func encodeContract(md *datacontract.Metadata, rs *datacontract.RuleSet) contract {
	return contract{datacontract.Encode(md.Canonical()), datacontract.Encode(rs.Canonical())}
}

func hasDefaultsOrOverrides(conf datacontract.Config) bool {
	return conf.DefaultMetadata != nil || conf.OverrideMetadata != nil || conf.DefaultRuleSet != nil || conf.OverrideRuleSet != nil
}

// merged is the metadata and rule set a new version of a subject gets, by
// Confluent's rules: the request's own (or, when it sends none, those of
// prev, the latest live version), over the config's defaults and under
// its overrides.
func merged(conf datacontract.Config, md *datacontract.Metadata, rs *datacontract.RuleSet, prev *store.Version) (*datacontract.Metadata, *datacontract.RuleSet, error) {
	if prev != nil && md == nil {
		var err error
		if md, err = datacontract.Decode[datacontract.Metadata](prev.Schema.Metadata); err != nil {
			return nil, nil, err
		}
	}
	if prev != nil && rs == nil {
		var err error
		if rs, err = datacontract.Decode[datacontract.RuleSet](prev.Schema.RuleSet); err != nil {
			return nil, nil, err
		}
	}
	md = datacontract.MergeMetadata(datacontract.MergeMetadata(conf.DefaultMetadata, md), conf.OverrideMetadata)
	rs = datacontract.MergeRuleSets(datacontract.MergeRuleSets(conf.DefaultRuleSet, rs), conf.OverrideRuleSet)
	return md.Canonical(), rs.Canonical(), nil
}

// withVersion is md with the confluent:version property set to version.
func withVersion(md *datacontract.Metadata, version int) *datacontract.Metadata {
	out := datacontract.Metadata{}
	if md != nil {
		out = *md
	}
	out.Properties = maps.Clone(out.Properties)
	if out.Properties == nil {
		out.Properties = map[string]string{}
	}
	out.Properties[datacontract.VersionProperty] = strconv.Itoa(version)
	return &out
}

// holds reports whether stored version v carries the contract c, as
// Confluent matches them: exactly, or, when one of the two has no
// confluent:version property, equal without it, where a
// confluent:version only c has must name v.
func holds(v store.Version, c contract) bool {
	if c.ruleSet != v.Schema.RuleSet {
		return false
	}
	if c.metadata == v.Schema.Metadata {
		return true
	}
	cm, err1 := datacontract.Decode[datacontract.Metadata](c.metadata)
	vm, err2 := datacontract.Decode[datacontract.Metadata](v.Schema.Metadata)
	if err1 != nil || err2 != nil {
		return false
	}
	cv, cHas := version(cm)
	_, vHas := version(vm)
	switch {
	case !cHas && vHas:
		return c.metadata == datacontract.Encode(withoutVersion(vm))
	case cHas && !vHas:
		return cv == strconv.Itoa(v.Version) && datacontract.Encode(withoutVersion(cm)) == v.Schema.Metadata
	}
	return false
}

func version(md *datacontract.Metadata) (string, bool) {
	if md == nil {
		return "", false
	}
	v, ok := md.Properties[datacontract.VersionProperty]
	return v, ok
}

func withoutVersion(md *datacontract.Metadata) *datacontract.Metadata {
	out := *md
	out.Properties = maps.Clone(md.Properties)
	delete(out.Properties, datacontract.VersionProperty)
	return out.Canonical()
}

// prepareRegistration returns the store's PrepareFunc for a registration
// of req on subject in READWRITE mode: the new version's metadata and rule
// set (merged, with confluent:version set to the new number when the
// request gives a version or the metadata has one), the live version that
// already holds the schema, and the version number req asks for, which
// must be the next one. final receives the schema decided.
func (s *Server) prepareRegistration(subject string, req *request, final *store.Schema) store.PrepareFunc {
	return func(ctx context.Context, sc store.Schema, live []store.Version, next int) (store.Schema, func(store.Version) bool, error) {
		sc.Context, _ = subjectref.Split(subject)
		conf, err := s.effectiveConfig(ctx, subject)
		if err != nil {
			return sc, nil, err
		}
		var prev *store.Version
		if len(live) > 0 {
			prev = &live[len(live)-1]
		}
		md, rs, err := merged(conf, req.Metadata, req.RuleSet, prev)
		if err != nil {
			return sc, nil, err
		}
		if _, has := version(md); has || req.Version != 0 {
			md = withVersion(md, next)
		}
		c := encodeContract(md, rs)
		sc.Metadata, sc.RuleSet = c.metadata, c.ruleSet
		*final = sc
		if req.Version > 0 {
			// Compare-and-set, as in Confluent: the version asked for must
			// be the one the registration makes.
			if req.Version != next {
				return sc, nil, apiErr(http.StatusUnprocessableEntity, CodeInvalidSchema,
					"Invalid schema: version %d is not one more than the subject's latest version (%d); another registration may have come first: read the latest version and retry", req.Version, next-1)
			}
			return sc, func(store.Version) bool { return false }, nil
		}
		raw := encodeContract(req.Metadata, req.RuleSet)
		useRaw := !hasDefaultsOrOverrides(conf)
		return sc, func(v store.Version) bool {
			return store.SameContent(v.Schema, sc) && (holds(v, c) || (useRaw && holds(v, raw)))
		}, nil
	}
}

// inGroup keeps the versions of history that share next's value of the
// config's compatibilityGroup property (all of them without a group), as
// Confluent checks compatibility only within a group.
func inGroup(conf datacontract.Config, next store.Schema, history []store.Version) ([]store.Version, error) {
	if conf.CompatibilityGroup == "" {
		return history, nil
	}
	value := func(stored string) (string, error) {
		md, err := datacontract.Decode[datacontract.Metadata](stored)
		if md == nil || err != nil {
			return "", err
		}
		return md.Properties[conf.CompatibilityGroup], nil
	}
	want, err := value(next.Metadata)
	if err != nil {
		return nil, err
	}
	var out []store.Version
	for _, v := range history {
		got, err := value(v.Schema.Metadata)
		if err != nil {
			return nil, err
		}
		if got == want {
			out = append(out, v)
		}
	}
	return out, nil
}

// lookupContract finds the version of subject holding sent (content from
// the request, with req's metadata and rule set) as Confluent's look-up
// does: with the request's own metadata and rules, then with those a
// registration would give it (the latest version's, merged with the
// config's). Newest first; soft-deleted versions too with deleted.
func (s *Server) lookupContract(ctx context.Context, subject string, sent store.Schema, req *request, deleted bool) (store.Version, error) {
	vs, err := s.cfg.Store.Versions(ctx, subject, deleted)
	if err != nil {
		return store.Version{}, err
	}
	conf, err := s.effectiveConfig(ctx, subject)
	if err != nil {
		return store.Version{}, err
	}
	sent.Context, _ = subjectref.Split(subject)
	raw := encodeContract(req.Metadata, req.RuleSet)
	cands := []contract{raw}
	latest, err := s.cfg.Store.Version(ctx, subject, subjectref.Latest, false)
	switch {
	case err == nil:
		md, rs, err := merged(conf, req.Metadata, req.RuleSet, &latest)
		if err != nil {
			return store.Version{}, err
		}
		cands = append(cands, encodeContract(md, rs))
	case !errors.Is(err, store.ErrVersionNotFound) && !errors.Is(err, store.ErrSubjectNotFound):
		return store.Version{}, err
	}
	for _, v := range slices.Backward(vs) {
		if !store.SameContent(v.Schema, sent) {
			continue
		}
		for _, c := range cands {
			if holds(v, c) {
				return v, nil
			}
		}
	}
	if raw == (contract{}) {
		// Rows of subjects written before contexts were understood.
		return s.cfg.Store.Lookup(ctx, subject, sent, deleted)
	}
	return store.Version{}, store.ErrSchemaNotFound
}

// groupOf narrows heads, a subject's live versions, to those a
// registration of req would be checked against under the config's
// compatibilityGroup (all of them without one).
func (s *Server) groupOf(ctx context.Context, subject string, req *request, heads []store.Version) ([]store.Version, error) {
	conf, err := s.effectiveConfig(ctx, subject)
	if err != nil || conf.CompatibilityGroup == "" || len(heads) == 0 {
		return heads, err
	}
	full, err := s.cfg.Store.Versions(ctx, subject, false)
	if err != nil {
		return nil, err
	}
	md, _, err := merged(conf, req.Metadata, req.RuleSet, &full[len(full)-1])
	if err != nil {
		return nil, err
	}
	return inGroup(conf, store.Schema{Metadata: datacontract.Encode(md)}, full)
}
