package console_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds the browser. Under CI=true a missing browser fails the
// test: scripts/setup.sh installs Debian's chromium.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium on PATH; scripts/setup.sh installs it (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH; install it (apt-get install chromium) to run the browser tests")
	return ""
}

// browser is a headless Chromium tab at a laptop's window size, and the
// directory screenshots go to: $CONSOLE_SCREENSHOTS when set, else the
// test's artifact directory (kept with go test -artifacts).
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string
	base  string
	// csp holds the Content-Security-Policy violations the browser
	// reported on its console, on any page, in order.
	mu  sync.Mutex
	csp []string
}

func newBrowser(t *testing.T, exe, base string) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1366, 860))
	// The deadline bounds a hung browser; no assertion depends on time.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	dir := os.Getenv("CONSOLE_SCREENSHOTS")
	if dir == "" {
		dir = t.ArtifactDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, ctx: bctx, shots: dir, base: base}
	// Subscribe before the first page opens, so no report is lost; the
	// subscription ends with the browser's context.
	msgs := chromedp.Console(bctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if strings.Contains(m.Text, "Content Security Policy") {
				b.mu.Lock()
				b.csp = append(b.csp, m.String())
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// cspMarker is an address only noCSPViolations fetches.
const cspMarker = "https://csp-marker.invalid/"

// noCSPViolations fails the test when the browser reported a
// Content-Security-Policy violation on any page so far. It first causes
// one it knows, a fetch from another origin, which connect-src 'self'
// blocks, and waits for its report: the browser reports in order, so
// every earlier one is in by then, and a harness that hears nothing
// fails rather than passes.
func (b *browser) noCSPViolations() {
	b.t.Helper()
	b.eval(`(fetch("` + cspMarker + `").catch(function () {}), "")`)
	for range 100 {
		b.mu.Lock()
		got := append([]string(nil), b.csp...)
		b.mu.Unlock()
		for i, m := range got {
			if strings.Contains(m, cspMarker) {
				if i > 0 {
					b.t.Errorf("the console broke its Content-Security-Policy:\n%s", strings.Join(got[:i], "\n"))
				}
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatal("the browser reported no violation for a fetch that connect-src 'self' blocks; the Content-Security-Policy is missing or the console log is not read")
}

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

func (b *browser) open(path string, ready string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS(ready)))
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (b *browser) eval(js string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return s
}

func (b *browser) contains(sel string, want ...string) {
	b.t.Helper()
	got := b.text(sel)
	for _, w := range want {
		if !strings.Contains(got, w) {
			b.t.Errorf("%s does not show %q; it shows:\n%s", sel, w, got)
		}
	}
}

// shot saves a full-page PNG named name.png.
func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.save(name, png)
}

func (b *browser) save(name string, png []byte) {
	b.t.Helper()
	path := filepath.Join(b.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", path)
}

// checkAndRegister submits the filled check form, ticks the confirmation,
// types the token and registers, ending on the new version's page.
func (b *browser) checkAndRegister() chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Click(chromedp.CSS(`form.check button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.confirm`)),
		chromedp.Click(chromedp.CSS(`form.confirm input[name=confirm]`)),
		chromedp.SetValue(chromedp.CSS(`form.confirm input[name=token]`), token),
		chromedp.Click(chromedp.CSS(`form.confirm button`)),
		chromedp.WaitVisible(chromedp.CSS(`pre.code`)))
}

// TestBrowser drives the console as a person would: registers two versions
// through the check form, finds the violation at its line in the diff,
// reads the contract view and its state-machine diagram, and replays a
// dead letter, with the token and a confirmation. The forms carry their
// CSRF token as a browser sends them, and no page breaks the
// Content-Security-Policy.
func TestBrowser(t *testing.T) {
	exe := chromium(t)
	f := newFixture(t)
	b := newBrowser(t, exe, f.URL)
	v1, v2 := paymentV1(t), paymentV2(t)

	// Version 1 through the check form: a new subject, then the token.
	b.open("/ui/check", "form.check")
	b.do("check v1",
		chromedp.SetValue(chromedp.CSS(`input[name=subject]`), subject),
		chromedp.SetValue(chromedp.CSS(`textarea[name=schema]`), v1),
		chromedp.Click(chromedp.CSS(`form.check button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.confirm`)))
	b.contains("section.result", "does not exist yet")
	b.do("register v1 without the token",
		chromedp.Click(chromedp.CSS(`form.confirm input[name=confirm]`)),
		chromedp.SetValue(chromedp.CSS(`form.confirm input[name=token]`), "wrong"),
		chromedp.Click(chromedp.CSS(`form.confirm button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.error`)))
	b.contains("p.error", "token is wrong")
	if _, err := f.Store.Versions(context.Background(), subject, false); err == nil {
		t.Fatal("a wrong token registered the schema")
	}
	b.open("/ui/check", "form.check")
	b.do("register v1",
		chromedp.SetValue(chromedp.CSS(`input[name=subject]`), subject),
		chromedp.SetValue(chromedp.CSS(`textarea[name=schema]`), v1),
		b.checkAndRegister())
	b.contains("h1", subject, "v1")
	b.contains("p.done", "registered as version 1")
	if v, err := f.Store.Version(context.Background(), subject, 1, false); err != nil || v.Schema.Text != v1 {
		t.Errorf("the form registered a different text than was pasted (%v)", err)
	}
	b.shot("version")

	// Version 2 breaks the biz_key: the check form shows the violation at
	// its line and offers no register button at BACKWARD.
	b.open("/ui/check?s="+subject, "form.check")
	b.do("check v2",
		chromedp.SetValue(chromedp.CSS(`textarea[name=schema]`), v2),
		chromedp.Click(chromedp.CSS(`form.check button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr.violation`)))
	b.contains("section.result", "violation", "EVENT_BIZ_KEY_CHANGED")
	if n := b.eval(`String(document.querySelectorAll("form.confirm").length)`); n != "0" {
		t.Errorf("an incompatible schema is offered for registration (%s forms)", n)
	}
	b.shot("check")
	// At NONE the registry takes it.
	f.setLevel(t, "NONE")
	b.do("register v2", b.checkAndRegister())
	b.contains("h1", "v2")

	// The diff: the violation row sits right under the changed line.
	b.open("/ui/subject?s="+subject, "table.list")
	b.contains("table.list", "v1", "v2")
	b.shot("subject")
	b.open("/ui/diff?s="+subject+"&from=1&to=2", "table.diff")
	line := lineOf(v2, newKey)
	under := b.eval(`(function(){var v=document.querySelector("tr.violation");return v?v.previousElementSibling.id+" "+v.previousElementSibling.textContent:"none"})()`)
	if !strings.HasPrefix(under, "N"+strconv.Itoa(line)+" ") || !strings.Contains(under, "{currency}") {
		t.Errorf("the violation is not under new line %d; the row above it is %q", line, under)
	}
	b.contains("tr.violation", "EVENT_BIZ_KEY_CHANGED", "biz_key", strconv.Itoa(line)+":")
	b.contains("p.summary", "1 violation")
	b.shot("diff")

	// The contract view: events, retry chart, the state machine.
	b.open("/ui/contract?s="+subject+"&v=2", "svg.states")
	b.contains("table.list", "PAY_SUCCESS", "order-event", "order_id:{order_id}:PAY_SUCCESS:{currency}", "OrderState.PAID")
	b.contains("section.chartbox", "dead-lettered after retry 6", "1m3s", "1m9s")
	states := b.eval(`Array.from(document.querySelectorAll("svg.states g.state")).map(g=>g.dataset.state).join(",")`)
	if states != "PAYING,PAID,REFUNDING,REFUNDED" {
		t.Errorf("the state diagram draws %q", states)
	}
	if n := b.eval(`String(document.querySelectorAll("svg.states .edge").length)`); n != "3" {
		t.Errorf("the state diagram draws %s transitions, want 3", n)
	}
	b.contains("#errors + table", "40000–49999", "non-retryable", "50000–59999")
	b.shot("contract")
	png, err := chromedp.Run(b.ctx, chromedp.Screenshot(chromedp.CSS("section.machine")))
	if err != nil {
		t.Fatal(err)
	}
	b.save("state-machine", png)

	// The subjects list, with keyboard navigation: j selects, Enter opens.
	b.open("/ui/", "table.list")
	b.contains("p.summary", "1 of 1 subjects")
	b.shot("subjects")
	b.do("keyboard", chromedp.KeyEvent("j"), chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.CSS("nav.crumbs")))
	if loc, _ := chromedp.Run(b.ctx, chromedp.Location()); !strings.Contains(loc, "/ui/subject?s="+subject) {
		t.Errorf("j, Enter went to %s", loc)
	}

	// Dead letters: the payload decoded with the registered schema, then
	// a replay behind a confirmation and the token.
	b.open("/ui/dlq?reason=retries_exhausted", "table.list")
	b.contains("table.list", "PAY_SUCCESS", "order_id:o-1042:PAY_SUCCESS", "retries_exhausted", "50301")
	b.shot("dlq")
	b.open("/ui/dlq/record?id="+f.DeadID, "dl.facts")
	b.contains("pre.json", `"order_id": "o-1042"`, `"amount": "12990"`, `"currency": "EUR"`)
	b.contains("dl.facts", "ledger answered 503", "never")
	b.shot("dead-letter")
	b.do("replay",
		chromedp.Click(chromedp.CSS(`a.button[href*="action=replay"]`)),
		chromedp.WaitVisible(chromedp.CSS(`form.confirm`)))
	b.contains("h1", "Replay 1 dead letter?")
	b.shot("replay-confirm")
	b.do("confirm replay",
		chromedp.SetValue(chromedp.CSS(`form.confirm input[name=token]`), token),
		chromedp.Click(chromedp.CSS(`form.confirm button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.done`)))
	b.contains("p.done", "replayed 1 record")
	b.contains("dl.facts", "1×")
	rec, err := f.Queue.Get(context.Background(), f.DeadID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ReplayCount != 1 {
		t.Fatalf("after the replay the record's replay count is %d, want 1", rec.ReplayCount)
	}
	// No page on the way broke the Content-Security-Policy.
	b.noCSPViolations()
}
