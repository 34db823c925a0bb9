package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
)

// TestRetryTiming checks the retry verdict: a delay off the schedule, a
// start before not_before, and a late start with no fault under way are
// violations; a late start inside a fault's window is counted apart; the
// first start of a (key, retry) is the one judged.
func TestRetryTiming(t *testing.T) {
	policy := backoff.Policy{BaseMs: 50, Multiplier: 2, JitterMs: 50, MaxDelayMs: 1000, MaxRetries: 4}
	base := time.UnixMilli(1_800_000_000_000)
	ms := func(d int) int64 { return base.Add(time.Duration(d) * time.Millisecond).UnixMilli() }
	line := func(key string, n, failed, notBefore, started int) string {
		return fmt.Sprintf("attempt %s %d %d %d %d", key, n, ms(failed), ms(notBefore), ms(started))
	}
	cases := []struct {
		name       string
		lines      []string
		fault      *window
		violations int
		inFault    int
		problem    string
	}{
		{name: "on time", lines: []string{line("k", 1, 0, 70, 80), line("k", 2, 100, 230, 240)}},
		{name: "retry 2 chose retry 1's delay", lines: []string{line("k", 2, 0, 60, 60)}, violations: 1, problem: "delay chosen 60ms, the schedule allows 100..150ms"},
		{name: "jitter beyond the policy's", lines: []string{line("k", 1, 0, 101, 101)}, violations: 1, problem: "allows 50..100ms"},
		{name: "started before not_before", lines: []string{line("k", 1, 0, 70, 60)}, violations: 1, problem: "before its not_before"},
		{name: "late, no fault", lines: []string{line("k", 1, 0, 70, 200)}, violations: 1, problem: "130ms after its not_before, with no fault under way"},
		{name: "late inside a fault", lines: []string{line("k", 1, 0, 70, 200)},
			fault: &window{base.Add(100 * time.Millisecond), base.Add(time.Second)}, inFault: 1},
		{name: "late, the fault long over", lines: []string{line("k", 1, 0, 70, 5200)},
			fault: &window{base.Add(-time.Hour), base.Add(-time.Minute)}, violations: 1},
		{name: "a redelivery's late start does not count when the first was on time",
			lines: []string{line("k", 1, 0, 70, 3000), line("k", 1, 0, 70, 75)}},
		{name: "a report that does not parse", lines: []string{"attempt k one 2 3 4"}, violations: 1, problem: "did not parse"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, faults := newAttempts(), newFaultLog()
			w := a.writer()
			for _, l := range tc.lines {
				// Written in two pieces, as a pipe may hand them over.
				half := len(l) / 2
				_, _ = w.Write([]byte(l[:half]))
				_, _ = w.Write([]byte(l[half:] + "\n"))
			}
			if tc.fault != nil {
				faults.add(faultKill, tc.fault.from, tc.fault.to)
			}
			v := a.check(policy, faults)
			if v.violations != tc.violations || v.lateInFault != tc.inFault {
				t.Fatalf("violations=%d lateInFault=%d, want %d and %d (%s)", v.violations, v.lateInFault, tc.violations, tc.inFault, v.firstProblem)
			}
			if !strings.Contains(v.firstProblem, tc.problem) {
				t.Fatalf("first problem %q, want it to say %q", v.firstProblem, tc.problem)
			}
		})
	}
}

// TestParseFaults checks which faults a transport and database allow.
func TestParseFaults(t *testing.T) {
	cases := []struct {
		transport, business, faults string
		want                        string // the set, or the error's words
	}{
		{"sqlite", "sqlite", "", "kill"},
		{"kafka", "sqlite", "", "kill,broker-kill"},
		{"rabbitmq", "sqlite", "", "kill,broker-kill"},
		{"rocketmq", "sqlite", "", "kill,broker-kill"},
		{"rocketmq", "sqlite", "pause,partition", "pause,partition"},
		{"kafka", "sqlite", "pause,partition", "pause,partition"},
		{"sqlite", "postgres", "kill,partition,db-restart", "kill,partition,db-restart"},
		{"sqlite", "sqlite", "partition", "partition needs a network"},
		{"nats", "sqlite", "broker-kill", "broker-kill needs -transport kafka, rabbitmq or rocketmq"},
		{"kafka", "sqlite", "db-restart", "db-restart needs -business postgres or mysql"},
		{"sqlite", "sqlite", "kill,nap", `"nap" is not one of`},
	}
	for _, tc := range cases {
		fs, err := parseFaults(config{transport: tc.transport, business: tc.business, faults: tc.faults})
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = fs.String()
		}
		if !strings.Contains(got, tc.want) || (err == nil && got != tc.want) {
			t.Errorf("%s/%s -faults %q: %q, want %q", tc.transport, tc.business, tc.faults, got, tc.want)
		}
	}
}

// TestHostPort checks the addresses the partition's bridge listens on.
func TestHostPort(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable": "127.0.0.1:5432",
		"nats://127.0.0.1:4222":                   "127.0.0.1:4222",
		"amqp://guest:guest@127.0.0.1:5672/":      "127.0.0.1:5672",
		"msgcontract:pw@tcp(127.0.0.1:3306)/db?x": "127.0.0.1:3306",
		"mysql://u:p@127.0.0.1:3306/mysql":        "127.0.0.1:3306",
		"127.0.0.1:9092":                          "127.0.0.1:9092",
	} {
		if got := hostPort(in); got != want {
			t.Errorf("hostPort(%q) = %q, want %q", in, got, want)
		}
	}
}
