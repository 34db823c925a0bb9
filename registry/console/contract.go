package console

import (
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/runtime-go/backoff"
)

type eventRow struct {
	Name, Topic, EventType, BizKey, TargetState string
	Policy                                      string
	OwnPolicy                                   bool
	// Chart is the anchor of the event's retry chart.
	Chart string
}

type retryChart struct {
	ID     string
	Policy string
	Events []string
	SVG    template.HTML
	Steps  []backoff.Step
	// Base and Jitter bound the total time from the first failure to
	// dead-lettering: Base without jitter, Base+Jitter with the most.
	Base, Jitter, Worst time.Duration
	Retries             int
}

type machineView struct {
	Name   string
	Anchor string
	SVG    template.HTML
	States []stateRow
}

type stateRow struct {
	Name   string
	From   []string
	Events []string
}

type rangeRow struct {
	From, To  int32
	Name      string
	Retryable bool
}

type contractData struct {
	Subject      string
	Version      int
	Versions     []int
	File         string
	Events       []eventRow
	Charts       []retryChart
	Machines     []machineView
	Ranges       []rangeRow
	Unclassified string
}

// contract shows what msgcontract knows about a version beyond its wire
// format: the events, their retry schedules, state machines and error
// ranges, from the contract model of the stored schema.
func (c *Console) contract(w http.ResponseWriter, r *http.Request) {
	name, v, all, ok := c.pickVersion(w, r)
	if !ok {
		return
	}
	p, err := c.compile(r.Context(), name, v.Schema)
	if err != nil {
		c.fail(w, r, http.StatusInternalServerError, "%v", err)
		return
	}
	d := contractView(p.Set.Files[0])
	d.Subject, d.Version = name, v.Version
	for _, o := range all {
		d.Versions = append(d.Versions, o.Version)
	}
	c.render(w, r, http.StatusOK, "contract", name+" v"+strconv.Itoa(v.Version)+" contract", "subjects", d)
}

func contractView(f *model.File) contractData {
	d := contractData{File: f.Path, Unclassified: "non-retryable"}
	if f.Defaults.Rules.UnclassifiedRetryable {
		d.Unclassified = "retryable"
	}
	for _, rg := range f.Defaults.Rules.Ranges {
		d.Ranges = append(d.Ranges, rangeRow{From: rg.From, To: rg.To, Name: rg.Name, Retryable: rg.Retryable})
	}
	charts := map[backoff.Policy]int{}
	targets := map[string][]string{} // state machine.state -> event types
	for _, e := range f.Events {
		row := eventRow{Name: e.Name(), Topic: e.Topic, EventType: e.EventType, BizKey: e.BizKeyTemplate,
			Policy: policyString(e.Policy), OwnPolicy: e.PolicyFromEvent}
		if e.TargetState != nil {
			row.TargetState = string(e.TargetState.Machine.Desc.Name()) + "." + string(e.TargetState.Value.Name())
			key := string(e.TargetState.Machine.Desc.FullName()) + "." + string(e.TargetState.Value.Name())
			targets[key] = append(targets[key], e.EventType)
		}
		i, ok := charts[e.Policy]
		if !ok {
			i = len(d.Charts)
			charts[e.Policy] = i
			d.Charts = append(d.Charts, newRetryChart("retry-"+strconv.Itoa(i+1), e.Policy))
		}
		d.Charts[i].Events = append(d.Charts[i].Events, e.EventType)
		row.Chart = d.Charts[i].ID
		d.Events = append(d.Events, row)
	}
	for _, sm := range f.StateMachines {
		mv := machineView{Name: string(sm.Desc.Name()), Anchor: "sm-" + string(sm.Desc.Name())}
		events := map[string][]string{}
		for _, st := range sm.States {
			evs := targets[string(sm.Desc.FullName())+"."+st.Name]
			events[st.Name] = evs
			if st.Desc.Number() != 0 {
				mv.States = append(mv.States, stateRow{Name: st.Name, From: st.From, Events: evs})
			}
		}
		mv.SVG = stateDiagram(sm, events)
		d.Machines = append(d.Machines, mv)
	}
	return d
}

func newRetryChart(id string, p backoff.Policy) retryChart {
	base, jitter := p.WorstCase()
	return retryChart{ID: id, Policy: policyString(p), Steps: p.Schedule(), Base: base, Jitter: jitter, Worst: base + jitter,
		Retries: p.MaxRetries, SVG: retrySVG(p)}
}

func policyString(p backoff.Policy) string {
	return fmt.Sprintf("base %s ×%g, jitter %s, cap %s, %d retries", dur(ms(p.BaseMs)), p.Multiplier, dur(ms(p.JitterMs)), dur(ms(p.MaxDelayMs)), p.MaxRetries)
}

// dur prints d without trailing zero units: 1m rather than 1m0s.
func dur(d time.Duration) string {
	s := d.String()
	for _, zero := range []string{"0s", "0m"} {
		if t := strings.TrimSuffix(s, zero); t != s && t != "" && !strings.HasSuffix(t, ".") && (t[len(t)-1] < '0' || t[len(t)-1] > '9') {
			s = t
		}
	}
	return s
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
