package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserSlashSubject follows, as a person would, the links to a
// subject named after an import path: the subjects list, the subject's
// page, a version and its contract view all open.
func TestBrowserSlashSubject(t *testing.T) {
	exe := chromium(t)
	f := newFixture(t)
	const slashed = "shop/payment/v1/payment.proto"
	f.register(t, slashed, paymentV1(t))
	b := newBrowser(t, exe, f.URL)

	b.open("/ui/", "table.list")
	// The list page has no crumbs; the subject's page and the error
	// page (p.error) each show one of them.
	b.do("open the subject",
		chromedp.Click(chromedp.CSS(`table.list td a[href^="/ui/subject?"]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav.crumbs, p.error`)))
	if got := b.eval(`document.querySelector("p.error") ? document.querySelector("p.error").textContent : ""`); got != "" {
		t.Fatalf("the subject's link opens an error page: %s", got)
	}
	b.contains("nav.crumbs", slashed)
	if loc, _ := chromedp.Run(b.ctx, chromedp.Location()); !strings.Contains(loc, "s=shop%2Fpayment%2Fv1%2Fpayment.proto") {
		t.Errorf("the subject's link went to %s", loc)
	}
	b.do("open version 1",
		chromedp.Click(chromedp.CSS(`table.list td a[href^="/ui/version?"]`)),
		chromedp.WaitVisible(chromedp.CSS(`pre.code`)))
	b.contains("h1", slashed, "v1")
	b.open("/ui/subject?s=shop%2Fpayment%2Fv1%2Fpayment.proto", "table.list")
	b.do("open the contract view",
		chromedp.Click(chromedp.CSS(`table.list td a[href^="/ui/contract?"]`)),
		chromedp.WaitVisible(chromedp.CSS(`svg.states`)))
	b.contains("table.list", "PAY_SUCCESS")
	b.noCSPViolations()
}
