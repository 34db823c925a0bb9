package main

import (
	"strings"
	"testing"
)

const (
	textA = "syntax = \"proto3\";\nmessage A {\n  string k = 1;\n}\n"
	textB = "syntax = \"proto3\";\nmessage B {\n  string k = 1;\n}\n"
	textC = "syntax = \"proto3\";\nmessage C {\n  string k = 1;\n}\n"
)

// goodView holds s1 versions 1 (id 1, A) and 2 (id 2, B) and s2 version 1
// (id 1, A again: one schema, one id).
func goodView(source string) View {
	return View{
		Source:   source,
		Subjects: []string{"s1", "s2"},
		Versions: map[string][]int{"s1": {1, 2}, "s2": {1}},
		IDs:      map[string]map[int]int64{"s1": {1: 1, 2: 2}, "s2": {1: 1}},
		Texts:    map[int64]string{1: textA, 2: textB},
	}
}

func goodAcks() []Ack {
	return []Ack{
		{Subject: "s1", Text: textA, ID: 1, Instance: "r1"},
		{Subject: "s1", Text: textB, ID: 2, Instance: "r2"},
		{Subject: "s2", Text: textA, ID: 1, Instance: "r3"},
		{Subject: "s1", Text: textB, ID: 2, Instance: "r3"}, // a retry
	}
}

func TestJudge(t *testing.T) {
	tests := []struct {
		name   string
		acks   func() []Ack
		views  func() []View
		lost   int
		unique bool
		contig bool
		agree  bool
		// failure is a substring of one of the failure lines.
		failure string
	}{
		{
			name:  "all good",
			acks:  goodAcks,
			views: func() []View { return []View{goodView("r1"), goodView("r2"), goodView("r3"), goodView("db")} },
			lost:  0, unique: true, contig: true, agree: true,
		},
		{
			name: "a lost ack",
			acks: func() []Ack { return append(goodAcks(), Ack{Subject: "s2", Text: textC, ID: 3, Instance: "r2"}) },
			views: func() []View {
				return []View{goodView("r1"), goodView("r2"), goodView("r3"), goodView("db")}
			},
			lost: 1, unique: true, contig: true, agree: true,
			failure: "lost: subject s2 schema C id 3 (acknowledged by r2): r1 has no version of s2 with id 3",
		},
		{
			name: "an ack whose id resolves to another schema",
			acks: goodAcks,
			views: func() []View {
				vs := []View{goodView("r1"), goodView("r2"), goodView("r3"), goodView("db")}
				for i := range vs {
					vs[i].Texts[2] = textC
				}
				return vs
			},
			lost: 1, unique: true, contig: true, agree: true,
			failure: "id 2 resolves on r1 to another schema, C",
		},
		{
			name: "a duplicate id: one schema under two ids",
			acks: goodAcks,
			views: func() []View {
				vs := []View{goodView("r1"), goodView("r2"), goodView("r3"), goodView("db")}
				for i := range vs {
					vs[i].Versions["s1"] = []int{1, 2, 3}
					vs[i].IDs["s1"][3] = 3
					vs[i].Texts[3] = textA
				}
				return vs
			},
			lost: 0, unique: false, contig: true, agree: true,
			failure: "ids: r1: ids 1 and 3 both hold schema A",
		},
		{
			name: "an acknowledged id that changed",
			acks: func() []Ack { return append(goodAcks(), Ack{Subject: "s2", Text: textB, ID: 4, Instance: "r1"}) },
			views: func() []View {
				vs := []View{goodView("r1"), goodView("r2"), goodView("r3"), goodView("db")}
				for i := range vs {
					vs[i].Versions["s2"] = []int{1, 2}
					vs[i].IDs["s2"][2] = 4
				}
				return vs
			},
			lost: 1, unique: false, contig: true, agree: true,
			failure: "ids: schema B acknowledged as id 2 (subject s1, by r2) and as id 4 (subject s2, by r1)",
		},
		{
			name: "a version gap",
			acks: goodAcks,
			views: func() []View {
				vs := []View{goodView("r1"), goodView("r2"), goodView("r3"), goodView("db")}
				for i := range vs {
					vs[i].Versions["s1"] = []int{1, 3}
					vs[i].IDs["s1"] = map[int]int64{1: 1, 3: 2}
				}
				return vs
			},
			lost: 0, unique: true, contig: false, agree: true,
			failure: "versions: r1: subject s1 has versions [1 3], not 1..2",
		},
		{
			name: "a duplicate version",
			acks: goodAcks,
			views: func() []View {
				vs := []View{goodView("r1"), goodView("r2"), goodView("r3"), goodView("db")}
				for i := range vs {
					vs[i].Versions["s2"] = []int{1, 1}
				}
				return vs
			},
			lost: 0, unique: true, contig: false, agree: true,
			failure: "subject s2 has versions [1 1], not 1..2",
		},
		{
			name: "an instance that answers otherwise",
			acks: goodAcks,
			views: func() []View {
				stale := goodView("r3")
				stale.Subjects = []string{"s1"}
				delete(stale.Versions, "s2")
				delete(stale.IDs, "s2")
				return []View{goodView("r1"), goodView("r2"), stale, goodView("db")}
			},
			lost: 1, unique: true, contig: true, agree: false,
			failure: "diverged: r1 vs r3: GET /subjects [s1 s2] vs [s1]",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.acks(), tc.views())
			if v.Lost != tc.lost || v.IDsUnique != tc.unique || v.VersionsContiguous != tc.contig || v.Agree != tc.agree {
				t.Errorf("lost=%d ids_unique=%v versions_contiguous=%v agree=%v, want %d %v %v %v; failures:\n%s",
					v.Lost, v.IDsUnique, v.VersionsContiguous, v.Agree, tc.lost, tc.unique, tc.contig, tc.agree, strings.Join(v.Failures, "\n"))
			}
			if v.OK() != (tc.failure == "") {
				t.Errorf("OK() = %v with failures:\n%s", v.OK(), strings.Join(v.Failures, "\n"))
			}
			if tc.failure != "" && !strings.Contains(strings.Join(v.Failures, "\n"), tc.failure) {
				t.Errorf("no failure line says %q; got:\n%s", tc.failure, strings.Join(v.Failures, "\n"))
			}
			if v.Acked != len(tc.acks()) {
				t.Errorf("acked=%d, want %d", v.Acked, len(tc.acks()))
			}
		})
	}
}

func TestLabel(t *testing.T) {
	for text, want := range map[string]string{
		schemaText(3, 17):                       "W3N17",
		"syntax = \"proto3\";\nmessage X{\n}\n": "X",
		"syntax = \"proto3\";\n":                "(19 bytes, no message)",
	} {
		if got := label(text); got != want {
			t.Errorf("label(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestProbeOf(t *testing.T) {
	p := probeOf(goodView("db"))
	want := View{
		Source:   "db",
		Subjects: []string{"s1", "s2"},
		Versions: map[string][]int{"s1": {1, 2}, "s2": {1}},
		IDs:      map[string]map[int]int64{"s1": {2: 2}, "s2": {1: 1}},
		Texts:    map[int64]string{1: textA, 2: textB},
	}
	if d := Diff(want, p); len(d) > 0 || len(p.IDs["s1"]) != 1 {
		t.Errorf("probeOf: %v, IDs %v", d, p.IDs)
	}
}

func TestErrorKind(t *testing.T) {
	se := &statusError{status: 500, body: `{"error_code":50001,"message":"Error in the backend data store: read tcp 127.0.0.1:49144->127.0.0.1:5432: reset"}`}
	if got, want := errorKind(se), "HTTP 500 Error in the backend data store: read tcp N.N.N.N:N->N.N.N.N..."; got != want {
		t.Errorf("errorKind = %q, want %q", got, want)
	}
}
