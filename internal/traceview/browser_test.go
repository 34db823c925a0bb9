package traceview

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// layout is what the browser reports of one span row.
type layout struct {
	ID                              string
	Error                           bool
	BarLeft, BarRight               float64
	LaneLeft, LaneRight             float64
	BarImage                        string
	TextLeft, AttrsHeight, DetailsH float64
}

const measure = `JSON.stringify([...document.querySelectorAll("li.span")].map(li => {
  const r = sel => li.querySelector(sel).getBoundingClientRect();
  const name = li.querySelector(".name");
  return {ID: li.id.slice(5), Error: li.classList.contains("error"),
    BarLeft: r(".bar").left, BarRight: r(".bar").right, LaneLeft: r(".lane").left, LaneRight: r(".lane").right,
    BarImage: getComputedStyle(li.querySelector(".bar")).backgroundImage,
    TextLeft: r(".name").left + parseFloat(getComputedStyle(name).paddingLeft),
    AttrsHeight: r(".attrs").height,
    DetailsH: li.querySelector(".detail").checkVisibility() ? r(".detail").height : 0};
}))`

// TestBrowserLayout opens the golden page in headless Chromium and checks
// what CSS must get right: every bar inside its lane where the span's start
// puts it, failed spans striped red, children indented under parents, the
// key attributes visible on closed rows and a row's details shown on click.
// Under CI=true a missing browser fails: scripts/setup.sh installs chromium.
func TestBrowserLayout(t *testing.T) {
	exe, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no chromium on PATH; scripts/setup.sh installs it (apt-get install chromium)")
		}
		t.Skip("no chromium on PATH; install it (apt-get install chromium) to run the browser test")
	}
	page, err := filepath.Abs(filepath.Join("testdata", "order-trace.html"))
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1366, 860))
	// The deadline bounds a hung browser; no assertion depends on time.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+page), chromedp.WaitVisible(chromedp.CSS("ol.spans"))); err != nil {
		t.Fatal(err)
	}
	read := func() map[string]layout {
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](measure))
		if err != nil {
			t.Fatal(err)
		}
		var rows []layout
		if err := json.Unmarshal([]byte(s), &rows); err != nil {
			t.Fatal(err)
		}
		out := map[string]layout{}
		for _, r := range rows {
			out[r.ID] = r
		}
		return out
	}
	rows := read()
	tr := orderTrace(t)
	if len(rows) != len(tr.Spans) {
		t.Fatalf("%d rows for %d spans", len(rows), len(tr.Spans))
	}
	v := build(tr, Options{})
	start, end := tr.Spans[0].StartTime, int64(0)
	for _, s := range tr.Spans {
		start, end = min(start, s.StartTime), max(end, s.StartTime+s.Duration)
	}
	depth := map[string]int{}
	textLeft := map[int]float64{}
	for _, want := range v.Rows {
		depth[want.ID] = want.Depth
		textLeft[want.Depth] = rows[want.ID].TextLeft
	}
	for _, s := range tr.Spans {
		r := rows[s.SpanID]
		lane := r.LaneRight - r.LaneLeft
		if r.BarLeft < r.LaneLeft-0.5 || r.BarRight > r.LaneRight+0.5 || r.BarRight-r.BarLeft < 1 {
			t.Errorf("span %s: bar %.1f-%.1f outside lane %.1f-%.1f or invisible", s.SpanID, r.BarLeft, r.BarRight, r.LaneLeft, r.LaneRight)
		}
		if got, want := (r.BarLeft-r.LaneLeft)/lane, float64(s.StartTime-start)/float64(end-start); math.Abs(got-want) > 0.01 {
			t.Errorf("span %s: bar starts at %.3f of the lane, its start is at %.3f of the trace", s.SpanID, got, want)
		}
		if striped := r.BarImage != "none"; striped != r.Error {
			t.Errorf("span %s: error %t, bar image %q", s.SpanID, r.Error, r.BarImage)
		}
		if r.TextLeft != textLeft[depth[s.SpanID]] || (depth[s.SpanID] > 0 && r.TextLeft <= textLeft[depth[s.SpanID]-1]) {
			t.Errorf("span %s at depth %d: text at x=%.1f; by depth %v", s.SpanID, depth[s.SpanID], r.TextLeft, textLeft)
		}
		if s.OperationName == "process order-event" && r.AttrsHeight < 10 {
			t.Errorf("span %s: its attributes take %.1fpx on the closed row", s.SpanID, r.AttrsHeight)
		}
		if r.DetailsH != 0 {
			t.Errorf("span %s: details shown before a click", s.SpanID)
		}
	}
	failed := spansWhere(tr, "msgcontract.outcome", "retry_scheduled")[0]
	if !rows[failed].Error {
		t.Errorf("the failed attempt %s is not drawn as an error", failed)
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#span-"+failed+" summary"))); err != nil {
		t.Fatal(err)
	}
	if h := read()[failed].DetailsH; h < 50 {
		t.Errorf("a click on the failed attempt's row shows %.1fpx of details", h)
	}
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.ArtifactDir(), "order-trace.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", shot)
}
