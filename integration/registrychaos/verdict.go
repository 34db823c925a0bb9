package main

import (
	"fmt"
	"slices"
	"strings"
)

// Ack is one acknowledged registration: a 200 with an id for a schema
// text registered under a subject, through one instance.
type Ack struct {
	Subject  string
	Text     string
	ID       int64
	Instance string
}

// View is what one source answers about the registry's content after
// recovery: an instance over its HTTP API, or the database itself.
type View struct {
	// Source names the view: an instance ("r1") or "db".
	Source string
	// Subjects is GET /subjects, as listed.
	Subjects []string
	// Versions is GET /subjects/{s}/versions for each subject, as listed.
	Versions map[string][]int
	// IDs maps each subject's version to its schema id
	// (GET /subjects/{s}/versions/{v}).
	IDs map[string]map[int]int64
	// Texts maps each schema id a version uses to its text
	// (GET /schemas/ids/{id}).
	Texts map[int64]string
}

// Verdict is the outcome of the checks over the acknowledged registrations
// and the views.
type Verdict struct {
	Acked              int
	Lost               int
	IDsUnique          bool
	VersionsContiguous bool
	// Agree reports that every view answered the same.
	Agree bool
	// Failures says, one line each, what broke and where.
	Failures []string
}

// OK reports whether every check passed.
func (v Verdict) OK() bool { return len(v.Failures) == 0 }

// maxDiffs bounds the differences between two views that are reported.
const maxDiffs = 5

// Judge checks acks against views: every acknowledged registration is
// still registered under its id, which resolves to its text, in every
// view (lost); one id per schema text and one text per id, in the acks and
// in every view (ids unique and stable); every subject's versions are
// 1..n (contiguous); and every view answers the same as the first (agree).
func Judge(acks []Ack, views []View) Verdict {
	v := Verdict{Acked: len(acks), IDsUnique: true, VersionsContiguous: true, Agree: true}
	fail := func(format string, args ...any) { v.Failures = append(v.Failures, fmt.Sprintf(format, args...)) }

	lost := map[Ack]bool{}
	for _, a := range acks {
		key := Ack{Subject: a.Subject, Text: a.Text, ID: a.ID}
		if lost[key] {
			continue
		}
		for _, w := range views {
			if why := missing(a, w); why != "" {
				lost[key] = true
				fail("lost: subject %s schema %s id %d (acknowledged by %s): %s", a.Subject, label(a.Text), a.ID, a.Instance, why)
				break
			}
		}
	}
	v.Lost = len(lost)

	// One id per schema, as acknowledged: a schema acknowledged twice (a
	// retry, or the same schema in another subject) under two ids means an
	// id changed or a schema got a second id.
	ackedID := map[string]Ack{}
	for _, a := range acks {
		first, seen := ackedID[a.Text]
		if !seen {
			ackedID[a.Text] = a
			continue
		}
		if first.ID != a.ID {
			v.IDsUnique = false
			fail("ids: schema %s acknowledged as id %d (subject %s, by %s) and as id %d (subject %s, by %s)",
				label(a.Text), first.ID, first.Subject, first.Instance, a.ID, a.Subject, a.Instance)
		}
	}
	for _, w := range views {
		byText := map[string]int64{}
		for _, id := range sortedIDs(w.Texts) {
			text := w.Texts[id]
			if other, dup := byText[text]; dup {
				v.IDsUnique = false
				fail("ids: %s: ids %d and %d both hold schema %s", w.Source, other, id, label(text))
				continue
			}
			byText[text] = id
		}
		for _, s := range sortedKeys(w.IDs) {
			for _, ver := range sortedKeys(w.IDs[s]) {
				if id := w.IDs[s][ver]; !hasKey(w.Texts, id) {
					v.IDsUnique = false
					fail("ids: %s: subject %s version %d has id %d, which does not resolve", w.Source, s, ver, id)
				}
			}
		}
	}

	for _, w := range views {
		for _, s := range sortedKeys(w.Versions) {
			if vs := w.Versions[s]; !contiguous(vs) {
				v.VersionsContiguous = false
				fail("versions: %s: subject %s has versions %v, not 1..%d", w.Source, s, vs, len(vs))
			}
		}
	}

	for _, w := range views[min(1, len(views)):] {
		if d := Diff(views[0], w); len(d) > 0 {
			v.Agree = false
			for _, line := range d {
				fail("diverged: %s", line)
			}
		}
	}
	return v
}

// missing says why view w lacks the acknowledged registration a, "" when
// it has it.
func missing(a Ack, w View) string {
	ids, ok := w.IDs[a.Subject]
	if !ok {
		return fmt.Sprintf("%s has no subject %s", w.Source, a.Subject)
	}
	found := false
	for _, id := range ids {
		if id == a.ID {
			found = true
			break
		}
	}
	if !found {
		return fmt.Sprintf("%s has no version of %s with id %d", w.Source, a.Subject, a.ID)
	}
	text, ok := w.Texts[a.ID]
	switch {
	case !ok:
		return fmt.Sprintf("id %d does not resolve on %s", a.ID, w.Source)
	case text != a.Text:
		return fmt.Sprintf("id %d resolves on %s to another schema, %s", a.ID, w.Source, label(text))
	}
	return ""
}

// contiguous reports whether vs is exactly 1, 2, ..., len(vs).
func contiguous(vs []int) bool {
	for i, n := range vs {
		if n != i+1 {
			return false
		}
	}
	return true
}

// Diff lists how b's answers differ from a's (at most maxDiffs lines,
// the last saying how many more), none when they agree.
func Diff(a, b View) []string {
	var out []string
	add := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("%s vs %s: ", a.Source, b.Source)+fmt.Sprintf(format, args...))
	}
	if !slices.Equal(a.Subjects, b.Subjects) {
		add("GET /subjects %v vs %v", a.Subjects, b.Subjects)
	}
	for _, s := range union(sortedKeys(a.Versions), sortedKeys(b.Versions)) {
		if !slices.Equal(a.Versions[s], b.Versions[s]) {
			add("GET /subjects/%s/versions %v vs %v", s, a.Versions[s], b.Versions[s])
			continue
		}
		for _, ver := range a.Versions[s] {
			if a.IDs[s][ver] != b.IDs[s][ver] {
				add("GET /subjects/%s/versions/%d: id %d vs %d", s, ver, a.IDs[s][ver], b.IDs[s][ver])
			}
		}
	}
	for _, id := range union(sortedIDs(a.Texts), sortedIDs(b.Texts)) {
		ta, oka := a.Texts[id]
		tb, okb := b.Texts[id]
		if oka != okb || ta != tb {
			add("GET /schemas/ids/%d: %s vs %s", id, describe(ta, oka), describe(tb, okb))
		}
	}
	if len(out) > maxDiffs {
		out = append(out[:maxDiffs], fmt.Sprintf("%s vs %s: %d differences more", a.Source, b.Source, len(out)-maxDiffs))
	}
	return out
}

// Agree reports whether every view answers the same as the first.
func Agree(views []View) bool {
	for _, w := range views[min(1, len(views)):] {
		if len(Diff(views[0], w)) > 0 {
			return false
		}
	}
	return true
}

func describe(text string, ok bool) string {
	if !ok {
		return "not found"
	}
	return label(text)
}

// label names a schema text briefly: its first message's name (which
// names the schemas this program writes), or its length when it has none.
func label(text string) string {
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "message ")
		if !ok {
			continue
		}
		if name, _, _ := strings.Cut(strings.TrimSpace(rest), " "); name != "" && name != "{" {
			return strings.TrimSuffix(name, "{")
		}
	}
	return fmt.Sprintf("(%d bytes, no message)", len(text))
}

func sortedKeys[K string | int, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sortedIDs(m map[int64]string) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func hasKey(m map[int64]string, id int64) bool {
	_, ok := m[id]
	return ok
}

// union merges two sorted lists into one sorted list without repeats.
func union[T string | int64](a, b []T) []T {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}
