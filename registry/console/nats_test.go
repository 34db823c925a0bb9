package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/internal/dlqopen"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/console"
	"github.com/msgcontract/msgcontract/registry/store"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs/natsserver"
)

// TestNATSDeadLetters: over NATS JetStream, opened by address as
// `registry serve --dlq nats://...` opens it, the console lists a dead
// letter, decodes its payload with the registered schema and replays it.
func TestNATSDeadLetters(t *testing.T) {
	t.Parallel()
	ns, err := natsserver.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	ctx := context.Background()
	nc, err := ns.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	tr, err := natsjs.New(ctx, natsjs.Config{Conn: nc, FetchWait: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	id := deadLetter(t, tr)

	st, err := store.Open(filepath.Join(t.TempDir(), "registry.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv, err := api.New(api.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	dl, err := dlqopen.Open(ctx, ns.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dl.Close() })
	ui, err := console.New(console.Config{Store: st, API: srv, DLQ: dl, DLQName: ns.URL()})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(console.WithAPI(srv, ui))
	t.Cleanup(hs.Close)
	form := map[string][]string{"subject": {subject}, "schema": {paymentV1(t)}, "confirm": {"yes"}}
	if status, body := post(t, hs.URL+"/ui/register", "", form); status != http.StatusSeeOther {
		t.Fatalf("register: HTTP %d\n%s", status, body)
	}
	for path, want := range map[string][]string{
		"/ui/dlq":                 {"order_id:o-1042:PAY_SUCCESS", "retries_exhausted", "nats://"},
		"/ui/dlq/record?id=" + id: {"&#34;order_id&#34;: &#34;o-1042&#34;", "ledger answered 503", "decoded with"},
	} {
		status, body := get(t, hs.URL+path)
		if status != http.StatusOK {
			t.Fatalf("%s: HTTP %d\n%s", path, status, body)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s does not show %q", path, w)
			}
		}
	}
	// Without a token configured, the confirmation alone is enough.
	replay := map[string][]string{"action": {"replay"}, "id": {id}, "confirm": {"yes"}}
	status, where := postLocation(t, hs.URL+"/ui/dlq/apply", replay)
	if status != http.StatusSeeOther {
		t.Fatalf("replay: HTTP %d", status)
	}
	// The NATS dead-letter stream rewrites a replayed record under a new
	// id, so the console goes back to the list of its biz_key.
	if !strings.HasPrefix(where, "/ui/dlq?biz_key=order_id") {
		t.Errorf("after the replay the console goes to %s", where)
	}
	recs, err := dl.List(ctx, dlq.Filter{BizKey: "order_id:o-1042:PAY_SUCCESS"})
	if err != nil || len(recs) != 1 || recs[0].ReplayCount != 1 {
		t.Fatalf("after the replay: %v, %+v", err, recs)
	}
	_, body := get(t, hs.URL+where)
	if !strings.Contains(body, "replayed 1 record") || !strings.Contains(body, "1×") {
		t.Errorf("the list after the replay does not say so:\n%s", body)
	}
}

// postLocation posts form as the console's page does and returns the
// status and where it redirects.
func postLocation(t *testing.T, u string, form url.Values) (int, string) {
	t.Helper()
	ck, tok := csrfPair(t, u)
	status, _, where := postRaw(t, u, nil, ck, withField(form, "csrf", tok))
	return status, where
}
