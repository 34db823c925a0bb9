package ops

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/metrics"
)

// vocabulary is every metric name of docs/DESIGN.md ("Observability"),
// with the series a histogram adds.
var vocabulary = func() map[string]bool {
	v := map[string]bool{}
	for _, n := range []string{metrics.NameProcessed, metrics.NameHandedBack, metrics.NameDLQMessages, metrics.NameConsumerLag} {
		v[n] = true
	}
	for _, h := range []string{metrics.NameHandlerDuration, metrics.NameRetryDelay, metrics.NameEndToEnd} {
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			v[h+s] = true
		}
	}
	return v
}()

var outcomes = []string{metrics.OutcomeHandled, metrics.OutcomeDeduplicated, metrics.OutcomeRetryScheduled,
	metrics.OutcomeDeadLettered, metrics.OutcomeConflict}

func promtool(t *testing.T, dir string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not on PATH: scripts/setup.sh installs Debian's prometheus package, which ships it")
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// The alert rules load, and each fires on its fixture and stays quiet on
// healthy traffic (promtool's unit tests).
func TestAlertRules(t *testing.T) {
	t.Parallel()
	out := promtool(t, "prometheus", "check", "rules", "msgcontract-alerts.yml")
	if !strings.Contains(out, "SUCCESS: 7 rules found") {
		t.Errorf("promtool check rules:\n%s", out)
	}
	out = promtool(t, "prometheus", "test", "rules", "msgcontract-alerts_test.yml")
	if !strings.Contains(out, "SUCCESS") {
		t.Errorf("promtool test rules:\n%s", out)
	}
	src, err := os.ReadFile("prometheus/msgcontract-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	used := checkNames(t, "alert rules", string(src))
	for _, n := range []string{metrics.NameProcessed, metrics.NameDLQMessages, metrics.NameConsumerLag, metrics.NameEndToEnd} {
		if !used[n] {
			t.Errorf("no alert reads %s", n)
		}
	}
}

var (
	metricName   = regexp.MustCompile(`\bmsgcontract_[a-z_]+`)
	outcomeMatch = regexp.MustCompile(`outcome=~?"([^"]*)"`)
	grafanaVar   = regexp.MustCompile(`\$(__rate_interval|[a-z_]+)`)
)

// checkNames fails on any msgcontract_ name or outcome value in text that
// is not in the vocabulary, and returns the names used.
func checkNames(t *testing.T, what, text string) map[string]bool {
	t.Helper()
	used := map[string]bool{}
	for _, n := range metricName.FindAllString(text, -1) {
		if !vocabulary[n] {
			t.Errorf("%s use %s, which is not in docs/DESIGN.md's vocabulary", what, n)
		}
		used[strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")] = true
	}
	for _, m := range outcomeMatch.FindAllStringSubmatch(text, -1) {
		for _, o := range strings.Split(m[1], "|") {
			if !slices.Contains(outcomes, o) {
				t.Errorf("%s use outcome %q, which is not one of %v", what, o, outcomes)
			}
		}
	}
	return used
}

type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

// Every dashboard expression parses as PromQL (promtool checks it as a
// recording rule, with Grafana's variables filled in) and reads only
// vocabulary names; every vocabulary metric has a panel.
func TestDashboard(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("grafana/msgcontract-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(src, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	var exprs []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if q, ok := v.Query.(map[string]any); ok {
			// label_values(EXPR, label) is Grafana's, not PromQL: check EXPR.
			s, _ := q["query"].(string)
			inner := strings.TrimSuffix(strings.TrimPrefix(s, "label_values("), ")")
			if i := strings.LastIndex(inner, ","); i > 0 {
				inner = inner[:i]
			}
			exprs = append(exprs, inner)
		}
	}
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range exprs {
		e = grafanaVar.ReplaceAllStringFunc(e, func(v string) string {
			if v == "$__rate_interval" {
				return "5m"
			}
			return ".*"
		})
		q, _ := json.Marshal(e)
		fmt.Fprintf(&rules, "      - record: dashboard:expr_%d\n        expr: %s\n", i, q)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboard.yml"), []byte(rules.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, dir, "check", "rules", "dashboard.yml")
	used := checkNames(t, "dashboard expressions", strings.Join(exprs, "\n"))
	for _, n := range []string{metrics.NameProcessed, metrics.NameHandedBack, metrics.NameHandlerDuration,
		metrics.NameRetryDelay, metrics.NameEndToEnd, metrics.NameDLQMessages, metrics.NameConsumerLag} {
		if !used[n] {
			t.Errorf("no dashboard panel reads %s", n)
		}
	}
}

// docs/DESIGN.md's table lists exactly the names runtime-go/metrics
// defines.
func TestDesignListsTheVocabulary(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../docs/DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(msgcontract_[a-z_]+)` \\|").FindAllStringSubmatch(string(src), -1) {
		listed = append(listed, m[1])
	}
	slices.Sort(listed)
	want := []string{metrics.NameConsumerLag, metrics.NameDLQMessages, metrics.NameHandlerDuration,
		metrics.NameHandedBack, metrics.NameProcessed, metrics.NameRetryDelay, metrics.NameEndToEnd}
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("DESIGN.md lists %v, runtime-go/metrics defines %v", listed, want)
	}
}
