package traceview

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Config configures a Handler.
type Config struct {
	// Jaeger is the base URL of Jaeger's query service
	// (http://host:16686): the handler reads <Jaeger>/api/traces/<id>.
	Jaeger string
	// Timeout bounds one request to Jaeger; 0 means 10 s.
	Timeout time.Duration
	// Client makes the requests; nil means a client of its own.
	Client *http.Client
}

// maxAnswer bounds the JSON read from Jaeger (a trace of many thousands
// of spans fits).
const maxAnswer = 64 << 20

// Handler serves GET /trace/<id>: the trace drawn by Render, read from
// Jaeger on each request. When Jaeger cannot be reached, does not know the
// trace or answers something else, the page says what failed and what to
// do, with status 502, 404 or 504.
func Handler(cfg Config) http.Handler {
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: cfg.Timeout}
	}
	cfg.Jaeger = strings.TrimRight(cfg.Jaeger, "/")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /trace/{id}", func(w http.ResponseWriter, r *http.Request) { serveTrace(w, r, cfg) })
	return mux
}

// failure is an error page: what failed and what to do about it.
type failure struct {
	Status int
	Title  string
	What   string
	Do     []string
	Detail string
}

func serveTrace(w http.ResponseWriter, r *http.Request, cfg Config) {
	id := strings.ToLower(r.PathValue("id"))
	if !validID(id) {
		fail(w, failure{Status: http.StatusBadRequest, Title: "not a trace id",
			What: fmt.Sprintf("%q is not a trace id: one is 1 to 32 hexadecimal digits.", r.PathValue("id")),
			Do:   []string{"Copy the trace id from the line the demo printed (trace: order ... /trace/<id>)."}})
		return
	}
	api := cfg.Jaeger + "/api/traces/" + id
	t, f := fetch(r.Context(), cfg, api, id)
	if f != nil {
		fail(w, *f)
		return
	}
	var b bytes.Buffer
	if err := Render(&b, t, Options{APIURL: api}); err != nil {
		fail(w, failure{Status: http.StatusInternalServerError, Title: "the trace could not be drawn",
			What: "Jaeger answered with trace " + id + ", but drawing it failed.", Detail: err.Error(),
			Do: []string{"Read the trace's JSON instead: " + api}})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

// fetch reads the trace from Jaeger, or says why it could not.
func fetch(ctx context.Context, cfg Config, api, id string) (*Trace, *failure) {
	down := func(status int, what string, err error) *failure {
		return &failure{Status: status, Title: "Jaeger did not answer", What: what, Detail: err.Error(),
			Do: []string{
				"If Jaeger is the throwaway one of make demo TRACE=1, it stops with the demo: run make demo TRACE=1 again and open the link it prints.",
				"If it is a Jaeger of your own, check that its query service listens at " + cfg.Jaeger + " (the demo's -jaeger-ui flag or $MSGCONTRACT_JAEGER_UI).",
			}}
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, api, nil)
	if err != nil {
		return nil, down(http.StatusBadGateway, "The Jaeger address "+cfg.Jaeger+" is not a URL.", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := cfg.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ue) && ue.Timeout()) {
			return nil, down(http.StatusGatewayTimeout, fmt.Sprintf("Jaeger at %s did not answer within %s.", cfg.Jaeger, cfg.Timeout), err)
		}
		return nil, down(http.StatusBadGateway, "Jaeger at "+cfg.Jaeger+" cannot be reached.", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, down(http.StatusBadGateway, "Jaeger at "+cfg.Jaeger+" broke off its answer.", err)
	}
	var t *Trace
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusNotFound {
		t, err = Decode(bytes.NewReader(body))
	} else {
		err = fmt.Errorf("GET %s: %s", api, resp.Status)
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, &failure{Status: http.StatusNotFound, Title: "Jaeger does not know trace " + id,
			What: "Jaeger at " + cfg.Jaeger + " answered that it has no trace " + id + ".", Detail: err.Error(),
			Do: []string{
				"Spans reach Jaeger a moment after the services send them: reload in a few seconds.",
				"The throwaway Jaeger of make demo TRACE=1 keeps spans in memory: a trace of an earlier run is gone once that Jaeger stopped.",
				"Check the id against the line the demo printed; Jaeger lists what it has at " + cfg.Jaeger + "/api/services and " + cfg.Jaeger + "/api/traces?service=NAME.",
			}}
	case err != nil:
		detail := err.Error()
		if len(body) > 0 {
			detail += "\n\n" + string(body[:min(len(body), 2000)])
		}
		return nil, &failure{Status: http.StatusBadGateway, Title: "Jaeger's answer is not a trace",
			What:   fmt.Sprintf("Jaeger at %s answered %s with something that is not a trace.", cfg.Jaeger, resp.Status),
			Detail: detail,
			Do: []string{
				"Check that " + cfg.Jaeger + " is Jaeger's query service (the port of /api/services), not its OTLP receiver.",
				"Read the answer yourself: " + api,
			}}
	}
	return t, nil
}

func validID(id string) bool {
	if id == "" || len(id) > 32 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func fail(w http.ResponseWriter, f failure) {
	var b bytes.Buffer
	if err := page.Execute(&b, view{Failure: &f}); err != nil {
		http.Error(w, f.Title+": "+f.What, f.Status)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(f.Status)
	w.Write(b.Bytes())
}
