// Package benchstat is the arithmetic and the output lines the bench
// programs share, so that every bench reports a median, a rate and a ratio
// the same way.
package benchstat

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0-100, nearest rank) of ds; zero
// for no samples.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// Median is the middle sample (the upper one of an even count).
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// Rate is n messages in d, per second.
func Rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

// Line is one side's report: name, msg/s, duration and a note.
func Line(name string, n int, d time.Duration, note string) string {
	return fmt.Sprintf("%-20s %9.0f msg/s  %-8v %s", name, Rate(n, d), d.Round(time.Millisecond), note)
}

// Ratio is the line "ratio a/b=X (a R msg/s, b R msg/s)", X being a's time
// per message over b's, both for n messages.
func Ratio(a, b string, n int, da, db time.Duration) string {
	return fmt.Sprintf("ratio %s/%s=%.2f (%s %.0f msg/s, %s %.0f msg/s)", a, b, da.Seconds()/db.Seconds(),
		a, Rate(n, da), b, Rate(n, db))
}
