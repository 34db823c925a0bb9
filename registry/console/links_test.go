package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	paymentv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// register registers text under subj through the REST API.
func (f *fixture) register(t *testing.T, subj, text string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"schema": text})
	req, _ := http.NewRequest(http.MethodPost, f.URL+"/subjects/"+url.PathEscape(subj)+"/versions", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("registering under %s: HTTP %d", subj, resp.StatusCode)
	}
}

var hrefRE = regexp.MustCompile(`href="(/ui/(?:subject|version|contract|diff|check)\?[^"]*)"`)

// TestSlashSubjectLinks: a subject named after an import path, as
// Confluent's serializers name the subjects of references, is reachable
// through every link the console draws to it.
func TestSlashSubjectLinks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const slashed = "shop/payment/v1/payment.proto"
	v1 := paymentV1(t)
	f.register(t, slashed, v1)
	f.register(t, slashed, strings.Replace(v1, "string currency = 3;", "string currency = 3;\n  string note = 4;", 1))

	seen := map[string]bool{}
	queue := []string{"/ui/"}
	for len(queue) > 0 && len(seen) < 60 {
		page := queue[0]
		queue = queue[1:]
		status, body := get(t, f.URL+page)
		if status != http.StatusOK {
			t.Errorf("GET %s: HTTP %d\n%.300s", page, status, body)
			continue
		}
		for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
			link := html.UnescapeString(m[1])
			if seen[link] {
				continue
			}
			seen[link] = true
			u, err := url.Parse(link)
			if err != nil {
				t.Errorf("%s links to %q: %v", page, link, err)
				continue
			}
			if s := u.Query().Get("s"); s != "" && s != slashed {
				t.Errorf("%s links to subject %q (%s), want %q", page, s, link, slashed)
			}
			queue = append(queue, link)
		}
	}
	for _, want := range []string{"/ui/subject?s=", "/ui/version?s=", "/ui/contract?s=", "/ui/diff?s="} {
		found := false
		for l := range seen {
			found = found || strings.HasPrefix(l, want)
		}
		if !found {
			t.Errorf("no link %s… was followed (%d links)", want, len(seen))
		}
	}
	// The links written before the fix, escaped twice, still open the
	// subject.
	old := "/ui/subject?s=" + url.QueryEscape(url.QueryEscape(slashed))
	if status, body := get(t, f.URL+old); status != http.StatusOK || !strings.Contains(body, slashed) {
		t.Errorf("GET %s: HTTP %d", old, status)
	}
}

// TestDeadLetterDecodedWithProducersVersion: a dead letter's payload is
// decoded with the version its envelope names, not the subject's latest.
func TestDeadLetterDecodedWithProducersVersion(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	v1 := paymentV1(t)
	f.register(t, subject, v1)
	f.setLevel(t, "NONE")
	// v2 renames PaySuccess.amount: the same bytes read as amount_cents.
	v2 := strings.Replace(v1, "int64 amount = 2;", "int64 amount_cents = 2;", 1)
	if v2 == v1 {
		t.Fatal("the example contract no longer has int64 amount = 2")
	}
	f.register(t, subject, v2)
	for version, want := range map[int32]string{1: `&#34;amount&#34;: &#34;12990&#34;`, 2: `&#34;amount_cents&#34;: &#34;12990&#34;`} {
		id := deadLetterOf(t, f, version)
		status, body := get(t, f.URL+"/ui/dlq/record?id="+url.QueryEscape(id))
		if status != http.StatusOK {
			t.Fatalf("dead letter %s: HTTP %d", id, status)
		}
		if !strings.Contains(body, want) {
			i := strings.Index(body, "order_id")
			t.Errorf("a payload produced with v%d is not decoded with it; want %s in\n%.400s", version, html.UnescapeString(want), body[max(0, i-100):])
		}
		if !strings.Contains(body, subject+" v"+string(rune('0'+version))) {
			t.Errorf("the page does not name v%d as the version decoded with", version)
		}
		if strings.Contains(body, "names no <code>schema_version</code>") {
			t.Errorf("v%d: the page says the envelope names no version", version)
		}
	}
	// An envelope that names no version is decoded with the latest, and
	// the page says so.
	id := deadLetterOf(t, f, 0)
	_, body := get(t, f.URL+"/ui/dlq/record?id="+url.QueryEscape(id))
	if !strings.Contains(body, `&#34;amount_cents&#34;: &#34;12990&#34;`) || !strings.Contains(body, "names no <code>schema_version</code>") {
		i := strings.Index(body, "decoded with")
		t.Errorf("an envelope without schema_version: the page does not say the latest version was used:\n%.600s", body[max(0, i):])
	}
}

// deadLetterOf dead-letters a PaySuccess whose envelope names the
// fixture's subject at version, and returns its id.
func deadLetterOf(t *testing.T, f *fixture, version int32) string {
	t.Helper()
	ctx := context.Background()
	sub, err := f.Queue.Subscribe(ctx, "payment-callback", []string{"order-event"})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	payload, err := proto.Marshal(&paymentv1.PaySuccess{OrderId: "o-7", Amount: 12990, Currency: "EUR"})
	if err != nil {
		t.Fatal(err)
	}
	msgID := "m-v" + string(rune('0'+version))
	env := &envelopepb.Envelope{MessageId: msgID, BizKey: "order_id:o-7:PAY_SUCCESS", EventType: "PAY_SUCCESS",
		SchemaSubject: subject, SchemaVersion: version, Topic: "order-event", Payload: payload, OccurredAt: time.Now().UnixMilli()}
	if err := f.Queue.Publish(ctx, "order-event", env); err != nil {
		t.Fatal(err)
	}
	ds, err := sub.Fetch(ctx, 1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("fetch: %v, %d deliveries", err, len(ds))
	}
	body, _ := envelope.Marshal(env)
	now := time.Now()
	rec := &dlq.Record{Topic: "order-event", Group: "payment-callback", Handler: "PaySuccess", EventType: "PAY_SUCCESS",
		BizKey: env.BizKey, MessageID: msgID, Envelope: body, Reason: dlq.ReasonRetriesExhausted, Code: 50301,
		Error: "ledger down", Attempts: 1, FirstFailedAt: now, LastFailedAt: now, DeadAt: now}
	if err := sub.DeadLetter(ctx, ds[0], rec); err != nil {
		t.Fatal(err)
	}
	recs, err := f.Queue.List(ctx, dlq.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.MessageID == msgID {
			return r.ID
		}
	}
	t.Fatalf("dead letter %s not listed", msgID)
	return ""
}
