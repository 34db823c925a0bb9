package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"os"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// writeHgrm writes h's percentile distribution in HdrHistogram's text
// format, values in milliseconds, which HdrHistogram's plotters read.
func writeHgrm(path string, h *hdrhistogram.Histogram) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := h.PercentilesPrint(f, 5, 1000); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// plot draws percentile curves the way HdrHistogram's plotter does: the
// x axis is 1/(1-quantile) on a log scale (50%, 90%, 99%, 99.9%, 99.99%
// equally spaced), the y axis latency in milliseconds on a log scale.
type plot struct {
	title  string
	series []series
}

type series struct {
	name   string
	points [][2]float64 // x = 1/(1-q), y = ms
}

func newPlot(title string) *plot { return &plot{title: title} }

func (p *plot) add(name string, h *hdrhistogram.Histogram) {
	s := series{name: name}
	for _, b := range h.CumulativeDistributionWithTicks(5) {
		q := b.Quantile / 100
		if q >= 0.99999 {
			break
		}
		s.points = append(s.points, [2]float64{1 / (1 - q), float64(b.ValueAt) / 1000})
	}
	p.series = append(p.series, s)
}

var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// svg renders the plot.
func (p *plot) svg() []byte {
	const w, h, left, right, top, bottom = 900.0, 540.0, 70.0, 230.0, 40.0, 50.0
	xmax := 1e5 // 99.999%
	ymin, ymax := math.Inf(1), 0.0
	for _, s := range p.series {
		for _, pt := range s.points {
			ymin, ymax = math.Min(ymin, pt[1]), math.Max(ymax, pt[1])
		}
	}
	if ymax == 0 {
		ymin, ymax = 0.1, 1
	}
	lo, hi := math.Floor(math.Log10(math.Max(ymin, 0.01))), math.Ceil(math.Log10(ymax))
	if hi <= lo {
		hi = lo + 1
	}
	x := func(v float64) float64 { return left + math.Log10(v)/math.Log10(xmax)*(w-left-right) }
	y := func(v float64) float64 {
		return h - bottom - (math.Log10(math.Max(v, 0.01))-lo)/(hi-lo)*(h-top-bottom)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="24" font-size="15">Producer commit to effect commit, %s</text>`+"\n", left, html.EscapeString(p.title))
	for i, label := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"} {
		xv := x(math.Pow(10, float64(i)))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/><text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n",
			xv, top, xv, h-bottom, xv, h-bottom+18, label)
	}
	for e := lo; e <= hi; e++ {
		yv := y(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/><text x="%.0f" y="%.1f" text-anchor="end">%g ms</text>`+"\n",
			left, yv, w-right, yv, left-6, yv+4, math.Pow(10, e))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">percentile</text>`+"\n", (left+w-right)/2, h-12)
	for i, s := range p.series {
		color := palette[i%len(palette)]
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.6" points="`, color)
		for _, pt := range s.points {
			fmt.Fprintf(&b, "%.1f,%.1f ", x(pt[0]), y(pt[1]))
		}
		b.WriteString("\"/>\n")
		ly := top + 10 + float64(i)*18
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"/><text x="%.0f" y="%.0f">%s</text>`+"\n",
			w-right+12, ly, w-right+32, ly, color, w-right+38, ly+4, html.EscapeString(s.name))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}
