package console

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"time"

	"github.com/msgcontract/msgcontract/codegen/model"
	"github.com/msgcontract/msgcontract/runtime-go/backoff"
)

// Chart geometry, in SVG user units.
const (
	chartW, chartH = 720, 260
	padL, padR     = 64, 56
	padT, padB     = 24, 44
)

// retrySVG draws a policy's schedule: one bar per retry for the delay
// without jitter and a lighter band above it up to the largest jitter, on
// the left axis; and the time since the first failure (without and with
// the most jitter) as two lines on the right axis, ending where the
// message is dead-lettered.
func retrySVG(p backoff.Policy) template.HTML {
	steps := p.Schedule()
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="retry delays: %s">`,
		chartW, chartH, html.EscapeString(policyString(p)))
	if len(steps) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="muted">max_retries is 0: the first retryable failure is dead-lettered at once.</text></svg>`, padL, chartH/2)
		return template.HTML(b.String()) //nolint:gosec // built from numbers and escaped text
	}
	var top time.Duration
	for _, s := range steps {
		top = max(top, s.MaxJitter)
	}
	total := nice(steps[len(steps)-1].CumMax)
	top = nice(top)
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	y := func(v, of time.Duration) float64 { return float64(padT) + plotH - float64(v)/float64(of)*plotH }
	slot := plotW / float64(len(steps))
	barW := slot * 0.55
	for i := 0; i <= 4; i++ {
		v, c := top*time.Duration(i)/4, total*time.Duration(i)/4
		fmt.Fprintf(&b, `<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/>`, padL, chartW-padR, y(v, top), y(v, top))
		fmt.Fprintf(&b, `<text class="axis" x="%d" y="%.1f" text-anchor="end">%s</text>`, padL-6, y(v, top)+4, short(float64(v)))
		fmt.Fprintf(&b, `<text class="axis right" x="%d" y="%.1f">%s</text>`, chartW-padR+6, y(c, total)+4, short(float64(c)))
	}
	var cum, cumMax []string
	for i, s := range steps {
		x := float64(padL) + slot*float64(i) + (slot-barW)/2
		fmt.Fprintf(&b, `<rect class="jitter" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>retry %d: %s to %s</title></rect>`,
			x, y(s.MaxJitter, top), barW, y(s.Delay, top)-y(s.MaxJitter, top), s.Retry, s.Delay, s.MaxJitter)
		fmt.Fprintf(&b, `<rect class="delay" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>retry %d waits %s (+ up to %s jitter)</title></rect>`,
			x, y(s.Delay, top), barW, y(0, top)-y(s.Delay, top), s.Retry, s.Delay, ms(p.JitterMs))
		fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%d" text-anchor="middle">%d</text>`, x+barW/2, chartH-padB+16, s.Retry)
		cx := x + barW/2
		cum = append(cum, fmt.Sprintf("%.1f,%.1f", cx, y(s.Cumulative, total)))
		cumMax = append(cumMax, fmt.Sprintf("%.1f,%.1f", cx, y(s.CumMax, total)))
	}
	fmt.Fprintf(&b, `<polyline class="cummax" points="%s"/><polyline class="cum" points="%s"/>`, strings.Join(cumMax, " "), strings.Join(cum, " "))
	last := steps[len(steps)-1]
	fmt.Fprintf(&b, `<text class="dead" x="%d" y="%d" text-anchor="end">dead-lettered after retry %d: %s – %s after the first failure</text>`,
		chartW-padR, padT-8, last.Retry, last.Cumulative, last.CumMax)
	fmt.Fprintf(&b, `<text class="axis" x="%.1f" y="%d" text-anchor="middle">retry</text>`, float64(padL)+plotW/2, chartH-8)
	fmt.Fprintf(&b, `<text class="axis" x="12" y="%d">delay</text><text class="axis right" x="%d" y="%d" text-anchor="end">total</text>`, padT-8, chartW-4, chartH-padB+16)
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built from numbers and escaped text
}

// nice rounds d up to a value whose quarters make round axis labels:
// 1, 2, 4, 6 or 8 times a power of ten milliseconds, or whole minutes.
func nice(d time.Duration) time.Duration {
	step := time.Millisecond
	for {
		for _, m := range []time.Duration{1, 2, 4, 6, 8} {
			if m*step >= d {
				return m * step
			}
		}
		step *= 10
	}
}

// short formats nanoseconds as a compact axis label.
func short(ns float64) string {
	s := ns / 1e9
	switch {
	case s == 0:
		return "0"
	case s < 1:
		return fmt.Sprintf("%.0fms", s*1000)
	case s < 120:
		return fmt.Sprintf("%.3gs", s)
	case s < 7200:
		return fmt.Sprintf("%.3gm", s/60)
	}
	return fmt.Sprintf("%.3gh", s/3600)
}

// stateDiagram draws a state machine's states left to right in declaration
// order (the zero value, which means unset, is left out). Transitions to a
// later state arc above the row, to an earlier one below; states no
// transition leads to are entry states, drawn with a double border. Each
// state lists the event types that move an entity into it.
func stateDiagram(sm *model.StateMachine, events map[string][]string) template.HTML {
	type node struct {
		st   *model.State
		x, w float64
	}
	var nodes []node
	index := map[string]int{}
	x := 16.0
	for _, st := range sm.States {
		if st.Desc.Number() == 0 {
			continue
		}
		w := float64(len(st.Name))*8.4 + 28
		for _, ev := range events[st.Name] {
			w = max(w, float64(len(ev))*7+20)
		}
		index[st.Name] = len(nodes)
		nodes = append(nodes, node{st, x, w})
		x += w + 56
	}
	width := x - 40
	// The tallest arc decides the vertical room above and below.
	above, below := 0, 0
	for _, n := range nodes {
		for _, f := range n.st.From {
			i, ok := index[f]
			if !ok {
				continue
			}
			span := index[n.st.Name] - i
			if span > 0 {
				above = max(above, span)
			} else {
				below = max(below, -span)
			}
		}
	}
	const boxH = 40.0
	arcUnit := 26.0
	// A cubic arc with both control points h*1.3 away peaks at 0.75 of
	// that: the room an arc spanning k states needs.
	room := func(k int) float64 {
		if k < 2 {
			return 0
		}
		return (float64(k-1)*arcUnit+22)*1.3*0.75 + 8
	}
	rowY := 12 + room(above)
	evY := rowY + boxH + 16 + room(below)
	height := evY + 4
	maxEvents := 0
	for _, n := range nodes {
		maxEvents = max(maxEvents, len(events[n.st.Name]))
	}
	height += float64(maxEvents) * 15
	if maxEvents == 0 {
		height += 8
	}
	var b strings.Builder
	name := html.EscapeString(string(sm.Desc.Name()))
	fmt.Fprintf(&b, `<svg class="states" viewBox="0 0 %.0f %.0f" width="%.0f" role="img" aria-label="state machine %s">`, width, height, width, name)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>`)
	reached := map[string]bool{}
	for _, n := range nodes {
		if len(n.st.From) > 0 {
			reached[n.st.Name] = true
		}
	}
	for _, n := range nodes {
		to := index[n.st.Name]
		for _, f := range n.st.From {
			i, ok := index[f]
			if !ok {
				continue
			}
			src := nodes[i]
			switch {
			case i+1 == to: // neighbours: a straight arrow
				fmt.Fprintf(&b, `<line class="edge" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" marker-end="url(#arrow)"><title>%s → %s</title></line>`,
					src.x+src.w, rowY+boxH/2, n.x-2, rowY+boxH/2, html.EscapeString(f), html.EscapeString(n.st.Name))
			case i < to:
				// Longer arcs leave further right and land further left,
				// so arcs sharing a state do not share an end.
				off := min(0.3, 0.1*float64(to-i-2))
				x1, x2 := src.x+src.w*(0.55+off), n.x+n.w*(0.45-off)
				h := float64(to-i-1)*arcUnit + 22
				fmt.Fprintf(&b, `<path class="edge" d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" marker-end="url(#arrow)"><title>%s → %s</title></path>`,
					x1, rowY, x1, rowY-h*1.3, x2, rowY-h*1.3, x2, rowY-2, html.EscapeString(f), html.EscapeString(n.st.Name))
			default:
				off := min(0.3, 0.1*float64(i-to-1))
				x1, x2 := src.x+src.w*(0.45-off), n.x+n.w*(0.55+off)
				h := float64(i-to)*arcUnit + 22
				yb := rowY + boxH
				fmt.Fprintf(&b, `<path class="edge back" d="M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" marker-end="url(#arrow)"><title>%s → %s</title></path>`,
					x1, yb, x1, yb+h*1.3, x2, yb+h*1.3, x2, yb+2, html.EscapeString(f), html.EscapeString(n.st.Name))
			}
		}
	}
	for _, n := range nodes {
		class := "state"
		if !reached[n.st.Name] {
			class += " entry"
		}
		fmt.Fprintf(&b, `<g class="%s" data-state="%s"><rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" rx="8"/>`,
			class, html.EscapeString(n.st.Name), n.x, rowY, n.w, boxH)
		if !reached[n.st.Name] {
			fmt.Fprintf(&b, `<rect class="inner" x="%.1f" y="%.1f" width="%.1f" height="%.0f" rx="6"/>`, n.x+3, rowY+3, n.w-6, boxH-6)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text></g>`, n.x+n.w/2, rowY+boxH/2+5, html.EscapeString(n.st.Name))
		for k, ev := range events[n.st.Name] {
			fmt.Fprintf(&b, `<text class="event" x="%.1f" y="%.1f" text-anchor="middle">⇢ %s</text>`,
				n.x+n.w/2, evY+float64(k)*15, html.EscapeString(ev))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // built from numbers and escaped text
}
