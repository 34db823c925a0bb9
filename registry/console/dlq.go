package console

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/msgcontract/msgcontract/registry/access"
	"github.com/msgcontract/msgcontract/registry/subjectref"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
)

// Reasons lists dead-letter reasons for the filter.
var reasons = []dlq.Reason{dlq.ReasonDecode, dlq.ReasonNonRetryable, dlq.ReasonRetriesExhausted, dlq.ReasonNoHandler, dlq.ReasonSchema}

type dlqFilter struct {
	Topic, Group, EventType, BizKey, Reason, State string
	Limit                                          int
}

func (f dlqFilter) query() string {
	v := url.Values{}
	for k, s := range map[string]string{"topic": f.Topic, "group": f.Group, "event_type": f.EventType, "biz_key": f.BizKey, "reason": f.Reason, "state": f.State} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v.Encode()
}

type dlqListData struct {
	Name     string
	Filter   dlqFilter
	Reasons  []dlq.Reason
	Records  []dlq.Record
	MoreURL  string
	Done     string
	Selected bool
}

func (c *Console) needDLQ(w http.ResponseWriter, r *http.Request) bool {
	if c.cfg.DLQ == nil {
		c.fail(w, r, http.StatusNotFound, "no dead-letter queue is configured; start the registry with --dlq PATH (the embedded SQLite queue file) or --dlq nats://HOST:4222")
		return false
	}
	return true
}

func readFilter(q url.Values) (dlqFilter, dlq.Filter, error) {
	f := dlqFilter{Topic: q.Get("topic"), Group: q.Get("group"), EventType: q.Get("event_type"), BizKey: q.Get("biz_key"), Reason: q.Get("reason"), State: q.Get("state")}
	f.Limit, _ = strconv.Atoi(q.Get("limit"))
	if f.Limit <= 0 {
		f.Limit = 100
	}
	df := dlq.Filter{Topic: f.Topic, Group: f.Group, EventType: f.EventType, BizKey: f.BizKey, Reason: dlq.Reason(f.Reason), Limit: f.Limit + 1}
	if f.Reason != "" {
		ok := false
		for _, r := range reasons {
			ok = ok || string(r) == f.Reason
		}
		if !ok {
			return f, df, fmt.Errorf("reason %q: want one of decode, non_retryable, retries_exhausted, no_handler, schema", f.Reason)
		}
	}
	switch f.State {
	case "", "all":
	case "pending":
		df.ExcludeReplayed = true
	case "replayed":
		df.OnlyReplayed = true
	default:
		return f, df, fmt.Errorf("state %q: want all, pending or replayed", f.State)
	}
	return f, df, nil
}

// dlqList lists dead letters, oldest first, filtered by the query.
func (c *Console) dlqList(w http.ResponseWriter, r *http.Request) {
	if !c.needDLQ(w, r) {
		return
	}
	f, df, err := readFilter(r.URL.Query())
	if err != nil {
		c.fail(w, r, http.StatusBadRequest, "%v", err)
		return
	}
	recs, err := c.cfg.DLQ.List(r.Context(), df)
	if err != nil {
		c.fail(w, r, http.StatusBadGateway, "listing dead letters in %s: %v", c.cfg.DLQName, err)
		return
	}
	d := dlqListData{Name: c.cfg.DLQName, Filter: f, Reasons: reasons, Records: recs, Done: r.URL.Query().Get("done")}
	if len(recs) > f.Limit {
		d.Records = recs[:f.Limit]
		more := f
		more.Limit *= 2
		d.MoreURL = "/ui/dlq?" + more.query() + "&limit=" + strconv.Itoa(more.Limit)
	}
	c.render(w, r, http.StatusOK, "dlq", "Dead letters", "dlq", d)
}

type dlqRecordData struct {
	Name string
	Rec  *dlq.Record
	Done string
	Env  envView
}

// envView is a record's envelope decoded, with the payload decoded by the
// registered schema of its event.
type envView struct {
	Error        string
	Subject      string
	Version      int
	SubjectGuess bool
	// VersionGuess is set when the envelope names no schema_version: the
	// subject's latest version decoded the payload, which need not be
	// the producer's.
	VersionGuess bool
	Envelope     string
	Payload      string
	PayloadError string
	PayloadHex   string
	OccurredAt   time.Time
	NotBefore    time.Time
}

// dlqRecord shows one record: why it died, and its message decoded.
func (c *Console) dlqRecord(w http.ResponseWriter, r *http.Request) {
	if !c.needDLQ(w, r) {
		return
	}
	id := r.URL.Query().Get("id")
	rec, err := c.cfg.DLQ.Get(r.Context(), id)
	if err != nil {
		c.storeFail(w, r, err, "dead letter "+strconv.Quote(id))
		return
	}
	d := dlqRecordData{Name: c.cfg.DLQName, Rec: rec, Done: r.URL.Query().Get("done"), Env: c.decode(r.Context(), rec)}
	c.render(w, r, http.StatusOK, "dlqrecord", "Dead letter "+id, "dlq", d)
}

func (c *Console) decode(ctx context.Context, rec *dlq.Record) envView {
	var v envView
	env, err := envelope.Unmarshal(rec.Envelope)
	if err != nil {
		v.Error = err.Error()
		v.PayloadHex = hexDump(rec.Envelope)
		return v
	}
	payload := env.GetPayload()
	env.Payload = nil // shown decoded below
	b, _ := envelope.MarshalJSON(env)
	v.Envelope = indent(b)
	env.Payload = payload
	v.OccurredAt = time.UnixMilli(env.GetOccurredAt()).UTC()
	if env.GetNotBefore() > 0 {
		v.NotBefore = time.UnixMilli(env.GetNotBefore()).UTC()
	}
	v.PayloadHex = hexDump(payload)
	v.Subject, v.Version = env.GetSchemaSubject(), int(env.GetSchemaVersion())
	if v.Subject == "" && env.GetTopic() != "" {
		// Generated producers name the subject after the topic.
		v.Subject, v.SubjectGuess = env.GetTopic()+"-value", true
	}
	if v.Subject == "" {
		v.PayloadError = "the envelope names no schema_subject and no topic; the payload cannot be matched to a schema"
		return v
	}
	// The producer's version, as its envelope names it: a payload is
	// decoded with the schema it was written with, whatever came after.
	n := v.Version
	if n <= 0 {
		n, v.VersionGuess = subjectref.Latest, true
	}
	sv, err := c.cfg.Store.Version(ctx, v.Subject, n, true)
	if err != nil {
		v.PayloadError = fmt.Sprintf("subject %s version %d: %v", v.Subject, v.Version, err)
		return v
	}
	v.Version = sv.Version
	p, err := c.compile(ctx, v.Subject, sv.Schema)
	if err != nil {
		v.PayloadError = err.Error()
		return v
	}
	for _, f := range p.Set.Files {
		for _, e := range f.Events {
			if e.EventType != env.GetEventType() {
				continue
			}
			m := dynamicpb.NewMessage(e.Desc)
			if err := envelope.DecodePayload(env, m); err != nil {
				v.PayloadError = fmt.Sprintf("the payload does not decode as %s: %v", e.Name(), err)
				return v
			}
			out, _ := envelope.MarshalPayloadForDisplay(m)
			v.Payload = indent(out)
			return v
		}
	}
	v.PayloadError = fmt.Sprintf("subject %s version %d has no event of type %q", v.Subject, v.Version, env.GetEventType())
	return v
}

// indent lays JSON out two spaces a level. protojson's own layout varies
// on purpose from build to build; this one is stable.
func indent(b []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}

func hexDump(b []byte) string {
	const most = 4096
	if len(b) > most {
		return hex.Dump(b[:most]) + fmt.Sprintf("… %d more bytes\n", len(b)-most)
	}
	return hex.Dump(b)
}

type dlqConfirmData struct {
	Name    string
	Action  string
	Records []dlq.Record
	Missing []string
	Error   string
	Back    string
}

// dlqConfirm is the confirmation step of replay and purge: it lists the
// records named by ?id= and asks for the token.
func (c *Console) dlqConfirm(w http.ResponseWriter, r *http.Request) {
	if !c.needDLQ(w, r) {
		return
	}
	c.confirmPage(w, r, http.StatusOK, r.URL.Query().Get("action"), r.URL.Query()["id"], "")
}

func (c *Console) confirmPage(w http.ResponseWriter, r *http.Request, status int, action string, ids []string, msg string) {
	if action != "replay" && action != "purge" {
		c.fail(w, r, http.StatusBadRequest, "action %q: want replay or purge", action)
		return
	}
	if len(ids) == 0 {
		c.fail(w, r, http.StatusBadRequest, "select the records to %s first (tick them in the list)", action)
		return
	}
	d := dlqConfirmData{Name: c.cfg.DLQName, Action: action, Error: msg, Back: r.Referer()}
	for _, id := range ids {
		rec, err := c.cfg.DLQ.Get(r.Context(), id)
		if errors.Is(err, dlq.ErrNotFound) {
			d.Missing = append(d.Missing, id)
			continue
		}
		if err != nil {
			c.fail(w, r, http.StatusBadGateway, "reading dead letter %s: %v", id, err)
			return
		}
		d.Records = append(d.Records, *rec)
	}
	c.render(w, r, status, "dlqconfirm", strings.ToUpper(action[:1])+action[1:]+" dead letters", "dlq", d)
}

// dlqApply replays or purges the confirmed records.
func (c *Console) dlqApply(w http.ResponseWriter, r *http.Request) {
	if !c.needDLQ(w, r) {
		return
	}
	action, ids := r.PostFormValue("action"), r.PostForm["id"]
	if r.PostFormValue("confirm") != "yes" {
		c.confirmPage(w, r, http.StatusBadRequest, action, ids, "confirm on this page to "+action)
		return
	}
	who, why := c.actor(r)
	if who == nil {
		c.confirmPage(w, r, http.StatusUnauthorized, action, ids, why)
		return
	}
	if ok, why := c.mayWrite(who, access.Admin, "", action+" dead letters"); !ok {
		c.confirmPage(w, r, denyStatus(who), action, ids, why)
		return
	}
	ctx := r.Context()
	var done, bizKey string
	switch action {
	case "replay":
		if len(ids) == 1 {
			if rec, err := c.cfg.DLQ.Get(ctx, ids[0]); err == nil {
				bizKey = rec.BizKey
			}
		}
		var failed []string
		for _, id := range ids {
			if err := c.cfg.DLQ.Replay(ctx, id); err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", id, err))
			}
		}
		if len(failed) > 0 {
			c.confirmPage(w, r, http.StatusBadGateway, action, ids, "some records could not be replayed: "+strings.Join(failed, "; "))
			return
		}
		done = fmt.Sprintf("replayed %d record%s", len(ids), plural(len(ids)))
	case "purge":
		n, err := c.cfg.DLQ.Purge(ctx, dlq.Filter{IDs: ids})
		if err != nil {
			c.confirmPage(w, r, http.StatusBadGateway, action, ids, "purge failed: "+err.Error())
			return
		}
		done = fmt.Sprintf("purged %d record%s", n, plural(n))
	default:
		c.fail(w, r, http.StatusBadRequest, "action %q: want replay or purge", action)
		return
	}
	if action == "replay" && len(ids) == 1 {
		// Back to the record, unless replaying gave it a new id (the NATS
		// dead-letter stream rewrites a replayed record): then to the
		// list of its biz_key.
		if _, err := c.cfg.DLQ.Get(ctx, ids[0]); err == nil {
			http.Redirect(w, r, "/ui/dlq/record?id="+url.QueryEscape(ids[0])+"&done="+url.QueryEscape(done), http.StatusSeeOther)
			return
		}
		if bizKey != "" {
			http.Redirect(w, r, "/ui/dlq?biz_key="+url.QueryEscape(bizKey)+"&done="+url.QueryEscape(done), http.StatusSeeOther)
			return
		}
	}
	http.Redirect(w, r, "/ui/dlq?done="+url.QueryEscape(done), http.StatusSeeOther)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
