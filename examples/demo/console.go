package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/msgcontract/msgcontract/internal/dlqopen"
	"github.com/msgcontract/msgcontract/internal/httpserve"
	"github.com/msgcontract/msgcontract/internal/traceview"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/console"
	"github.com/msgcontract/msgcontract/registry/store"
)

// serveConsole serves the registry of the finished run, with its web
// console, on ln until ctx ends (Ctrl-C). Over SQLite
// and Kafka (whose broker outlives the run) the console also shows the
// run's dead letters; the in-process NATS server is gone once the run
// ends, so over NATS it shows the registry only. With tracing,
// /trace/<id> beside it draws the run's trace (res.TraceView).
func serveConsole(ctx context.Context, cfg Config, res *Result, ln net.Listener, out io.Writer) error {
	work, err := filepath.Abs(cfg.WorkDir)
	if err != nil {
		return err
	}
	st, err := store.Open(filepath.Join(work, "registry.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	srv, err := api.New(api.Config{Store: st})
	if err != nil {
		return err
	}
	ui := console.Config{Store: st, API: srv}
	dlqAddr := res.DLQ
	if cfg.Transport == "sqlite" {
		dlqAddr = filepath.Join(work, "queue.db")
	}
	if dlqAddr != "" {
		dl, err := dlqopen.Open(ctx, dlqAddr)
		if err != nil {
			return err
		}
		defer dl.Close()
		ui.DLQ, ui.DLQName = dl, dlqAddr
		if u, err := url.Parse(dlqAddr); err == nil && u.User != nil {
			ui.DLQName = u.Redacted() // the page shows it: RabbitMQ's URL carries the password
		}
	}
	con, err := console.New(ui)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", console.WithAPI(srv, con))
	if res.TraceView != "" {
		mux.Handle("GET /trace/", traceview.Handler(traceview.Config{Jaeger: res.JaegerUI}))
	}
	fmt.Fprintf(out, "console: http://%s%s (kept open by --keep; Ctrl-C stops it)\n", ln.Addr(), console.Prefix)
	return serve(ctx, ln, mux)
}

// traceHold is what -hold-trace serves: the run's trace page at
// /trace/<id>, and a redirect to it at the root, so that the bare address
// opened by hand finds the page instead of a 404.
func traceHold(res *Result) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /trace/", traceview.Handler(traceview.Config{Jaeger: res.JaegerUI}))
	mux.Handle("GET /{$}", http.RedirectHandler("/trace/"+res.TraceID, http.StatusFound))
	return mux
}

// serve serves h on ln until ctx ends.
func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	return httpserve.Run(ctx, &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, ln, 5*time.Second)
}
