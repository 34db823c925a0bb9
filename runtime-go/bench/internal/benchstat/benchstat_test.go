package benchstat

import (
	"testing"
	"time"
)

func TestPercentileAndMedian(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	if got := Median(ds); got != 3 {
		t.Errorf("Median = %v, want 3", got)
	}
	for p, want := range map[float64]time.Duration{0: 1, 20: 1, 50: 3, 90: 5, 100: 5} {
		if got := Percentile(ds, p); got != want {
			t.Errorf("Percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if ds[0] != 5 {
		t.Error("Percentile sorted its argument")
	}
}

func TestRatio(t *testing.T) {
	got := Ratio("a", "b", 1000, 2*time.Second, time.Second)
	want := "ratio a/b=2.00 (a 500 msg/s, b 1000 msg/s)"
	if got != want {
		t.Errorf("Ratio = %q, want %q", got, want)
	}
}
