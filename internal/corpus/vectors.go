// Package corpus checks msgcontract's central promise on whole sets of
// contracts: every contract lint accepts generates Go, Java and Python that
// build cleanly (go vet; javac -Xlint:all -Werror; mypy --strict) and make
// the same decisions. Vectors derives conformance cases from the contract
// model, whose answers are DESIGN.md's rules as runtime-go implements
// them; the conformance executors then build and run all three languages
// once over the whole set. Its tests run the hand-written edge corpus
// under testdata/corpus and randomly generated contracts (Random).
package corpus

import (
	"encoding/json"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/conformance"
	"github.com/msgcontract/msgcontract/runtime-go/bizkey"
)

// maxStates bounds the names of one machine whose pairs are all asked, so
// a huge enum costs O(maxStates²) cases, not O(n²).
const maxStates = 12

// Vectors returns, for every event and state machine of set, cases whose
// expectations the model computes: transitions between every pair of
// names (aliases and an unknown name included), classification at and
// around every range edge and with no code, every backoff step up to the
// dead letter, and biz_keys of a message filled with awkward values and of
// an empty one.
func Vectors(set *model.Set) ([]conformance.Case, error) {
	var cases []conformance.Case
	for _, f := range set.Files {
		for _, sm := range f.StateMachines {
			cases = append(cases, transitions(sm)...)
		}
		for _, ev := range f.Events {
			cases = append(cases, classifications(ev)...)
			cases = append(cases, backoffs(ev)...)
			keys, err := bizKeys(ev)
			if err != nil {
				return nil, err
			}
			cases = append(cases, keys...)
		}
	}
	return cases, nil
}

func str(s string) *string { return &s }

func transitions(sm *model.StateMachine) []conformance.Case {
	var names []string
	for i, st := range sm.States {
		if i < maxStates || sm.Canonical(st.Name) != st.Name {
			names = append(names, st.Name)
		}
	}
	names = append(names, "NO_SUCH_STATE")
	full := string(sm.Desc.FullName())
	var out []conformance.Case
	for _, from := range names {
		for _, to := range names {
			out = append(out, conformance.Case{
				Name: fmt.Sprintf("%s %s->%s", full, from, to), Kind: conformance.KindTransition,
				Enum: full, From: from, To: to,
				Expect: conformance.Result{Result: str(string(sm.CanTransit(from, to)))},
			})
		}
	}
	return out
}

func classifications(ev *model.Event) []conformance.Case {
	rules := ev.Rules.Classify()
	codes := []int64{0, -1, math.MaxInt32, math.MinInt32}
	for _, r := range ev.Rules.Ranges {
		codes = append(codes, int64(r.From)-1, int64(r.From), int64(r.To), int64(r.To)+1)
	}
	var out []conformance.Case
	for _, c := range codes {
		if c < math.MinInt32 || c > math.MaxInt32 {
			continue
		}
		code := int32(c)
		got := rules.Code(code)
		out = append(out, conformance.Case{
			Name: fmt.Sprintf("%s classify %d", ev.Name(), code), Kind: conformance.KindClassify,
			Message: ev.Name(), Code: &code,
			Expect: conformance.Result{Retryable: &got.Retryable, Range: str(got.Range)},
		})
	}
	none := rules.NoCode()
	return append(out, conformance.Case{
		Name: ev.Name() + " classify no code", Kind: conformance.KindClassify, Message: ev.Name(),
		Expect: conformance.Result{Retryable: &none.Retryable, Range: str(none.Range)},
	})
}

func backoffs(ev *model.Event) []conformance.Case {
	var out []conformance.Case
	for n := 1; n <= ev.Policy.MaxRetries+1; n++ {
		for _, u := range []float64{0, 0.999} {
			dead := ev.Policy.DeadLetter(n)
			want := conformance.Result{DeadLetter: &dead}
			if !dead {
				d := ev.Policy.Delay(n, u)
				want.DelayMs = &d
			}
			out = append(out, conformance.Case{
				Name: fmt.Sprintf("%s retry %d u=%v", ev.Name(), n, u), Kind: conformance.KindBackoff,
				Message: ev.Name(), Retry: n, U: u, Expect: want,
			})
		}
	}
	return out
}

// awkward is the text every string placeholder gets: percent-encoding,
// multi-byte and non-BMP characters, a quote and a backslash.
const awkward = `a:b/ü "q"\😀 %`

func bizKeys(ev *model.Event) ([]conformance.Case, error) {
	full := map[string]any{}
	for _, part := range ev.BizKey {
		if !part.IsPlaceholder() {
			continue
		}
		obj := full
		for _, fd := range part.Fields[:len(part.Fields)-1] {
			next, ok := obj[string(fd.Name())].(map[string]any)
			if !ok {
				next = map[string]any{}
				obj[string(fd.Name())] = next
			}
			obj = next
		}
		obj[string(part.Leaf().Name())] = value(part.Leaf())
	}
	// Required fields outside the key are filled too, so the input parses.
	fields := ev.Desc.Fields()
	for i := 0; i < fields.Len(); i++ {
		if fd := fields.Get(i); fd.Cardinality() == protoreflect.Required && fd.Message() == nil {
			if _, ok := full[string(fd.Name())]; !ok {
				full[string(fd.Name())] = value(fd)
			}
		}
	}
	var out []conformance.Case
	for _, name := range []string{"empty", "filled"} {
		input := map[string]any{}
		if name == "filled" {
			input = full
		}
		raw, err := json.Marshal(input)
		if err != nil {
			return nil, err
		}
		m := dynamicpb.NewMessage(ev.Desc)
		if err := protojson.Unmarshal(raw, m); err != nil || missingRequired(m) {
			// An input missing a proto2 required field is not valid
			// JSON for the message in every language: no case.
			// protojson alone does not say so for an editions
			// LEGACY_REQUIRED field, whose message's RequiredNumbers
			// protocompile leaves empty.
			continue
		}
		var want conformance.Result
		key, err := ev.RenderBizKey(m)
		if ke, ok := err.(*bizkey.Error); ok {
			want.Error = str(string(ke.Code))
		} else if err != nil {
			return nil, err
		} else {
			want.BizKey = &key
		}
		out = append(out, conformance.Case{
			Name: ev.Name() + " biz_key " + name, Kind: conformance.KindBizKey,
			Message: ev.Name(), Input: raw, Expect: want,
		})
	}
	return out, nil
}

// missingRequired says whether m, or a message set in it, lacks a field
// whose cardinality is required.
func missingRequired(m protoreflect.Message) bool {
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.Cardinality() == protoreflect.Required && !m.Has(fd) {
			return true
		}
		if fd.Message() != nil && fd.Cardinality() != protoreflect.Repeated && m.Has(fd) && missingRequired(m.Get(fd).Message()) {
			return true
		}
	}
	return false
}

// value is a JSON value for a placeholder leaf: extremes for integers,
// the last declared name for an enum.
func value(fd protoreflect.FieldDescriptor) any {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return awkward
	case protoreflect.BoolKind:
		return true
	case protoreflect.EnumKind:
		vs := fd.Enum().Values()
		return string(vs.Get(vs.Len() - 1).Name())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return math.MinInt32
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return uint32(math.MaxUint32)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "18446744073709551615"
	default: // 64-bit signed
		return "-9223372036854775808"
	}
}
