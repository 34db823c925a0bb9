package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATSConfig names the JetStream server(s) CheckNATS reads: a client URL
// for the streams, a monitoring URL for the server's sync setting, or
// both.
type NATSConfig struct {
	URL        string   // client URL, nats://host:4222: the streams' replicas and storage
	MonitorURL string   // monitoring endpoint, http://host:8222: the server's jetstream sync_interval (/varz)
	Streams    []string // the streams to check; every stream when empty
	// Opts are extra nats.go options (credentials, TLS).
	Opts []nats.Option
}

// Validate reports a NATSConfig that names neither URL or a bad one.
func (c *NATSConfig) Validate() error {
	if c.URL == "" && c.MonitorURL == "" {
		return errors.New("nats: name a client URL (nats://host:4222) for the streams, a monitoring URL (http://host:8222) for the sync interval, or both")
	}
	if c.MonitorURL != "" {
		u, err := url.Parse(c.MonitorURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("nats: monitoring URL %q: want http://host:port (the server's http_port, 8222 by default)", c.MonitorURL)
		}
	}
	if len(c.Streams) > 0 && c.URL == "" {
		return errors.New("nats: streams named without a client URL to read them through")
	}
	return nil
}

func (c *NATSConfig) target() string {
	return strings.Join(slices.DeleteFunc([]string{c.URL, c.MonitorURL}, func(s string) bool { return s == "" }), " ")
}

// natsVarz is the part of nats-server's /varz doctor reads (nats-server
// 2.10 and later: jetstream.config.sync_interval in nanoseconds,
// sync_always when sync_interval is "always").
type natsVarz struct {
	ServerID   string `json:"server_id"`
	ServerName string `json:"server_name"` // the ID unless the config names it
	JetStream  struct {
		Config *struct {
			SyncInterval *int64 `json:"sync_interval"`
			SyncAlways   bool   `json:"sync_always"`
		} `json:"config"`
	} `json:"jetstream"`
}

// CheckNATS reads the server's JetStream sync interval from /varz and
// each stream's replicas and storage through the JetStream API.
//
// A JetStream server acknowledges a write once it is in the operating
// system's page cache and flushes every sync_interval (2 minutes by
// default): Jepsen's analysis of NATS 2.12.1 lost acknowledged writes to
// crashes and power loss within that window. A replicated stream keeps a
// write once a majority of servers has it, which survives one server's
// loss only while the others do not fail at the same time.
func CheckNATS(ctx context.Context, cfg NATSConfig) ([]Finding, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var fs []Finding
	var errs []error
	if cfg.MonitorURL != "" {
		f, err := natsSyncFindings(ctx, cfg.MonitorURL)
		fs = append(fs, f...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if cfg.URL != "" {
		f, err := natsStreamFindings(ctx, cfg)
		fs = append(fs, f...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return fs, errors.Join(errs...)
}

func natsSyncFindings(ctx context.Context, monitor string) ([]Finding, error) {
	u := strings.TrimSuffix(monitor, "/") + "/varz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w (is the server's monitoring port, http_port, open?)", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	var v natsVarz
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("GET %s: not nats-server's /varz: %w", u, err)
	}
	c := v.JetStream.Config
	if c == nil {
		return nil, fmt.Errorf("GET %s: no jetstream.config: JetStream is not enabled on this server", u)
	}
	if c.SyncAlways {
		return nil, nil
	}
	if c.SyncInterval == nil {
		return nil, fmt.Errorf("GET %s: jetstream.config has no sync_interval (nats-server before 2.10?): read jetstream { sync_interval } in the server's config file", u)
	}
	target := monitor
	if v.ServerName != "" && v.ServerName != v.ServerID {
		target = v.ServerName + " (" + monitor + ")"
	}
	return []Finding{{System: "nats", Target: target, Setting: "jetstream.sync_interval", Value: time.Duration(*c.SyncInterval).String(), Want: "always",
		Risk: "a write is acknowledged before it is flushed to disk: a crash of the machine or a power loss within the interval loses acknowledged messages (Jepsen, NATS 2.12.1)",
		Fix:  "jetstream { sync_interval: always } in the server's config file, then restart it"}}, nil
}

func natsStreamFindings(ctx context.Context, cfg NATSConfig) ([]Finding, error) {
	nc, err := nats.Connect(cfg.URL, append([]nats.Option{nats.Timeout(timeLeft(ctx)), nats.Name("msgcontract doctor")}, cfg.Opts...)...)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w (is the server up, and the URL and credentials right?)", cfg.URL, err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	var infos []*jetstream.StreamInfo
	var errs []error
	if len(cfg.Streams) == 0 {
		l := js.ListStreams(ctx)
		for info := range l.Info() {
			infos = append(infos, info)
		}
		if err := l.Err(); err != nil {
			return nil, fmt.Errorf("list streams on %s: %w (is JetStream enabled?)", cfg.URL, err)
		}
		if len(infos) == 0 {
			return nil, fmt.Errorf("%s has no streams to check: name them with --nats-stream once they exist", cfg.URL)
		}
	}
	for _, name := range cfg.Streams {
		s, err := js.Stream(ctx, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("stream %s: %w", name, err))
			continue
		}
		infos = append(infos, s.CachedInfo())
	}
	slices.SortFunc(infos, func(a, b *jetstream.StreamInfo) int { return strings.Compare(a.Config.Name, b.Config.Name) })
	var fs []Finding
	for _, info := range infos {
		fs = append(fs, natsStreamInfoFindings(info.Config, info.Cluster)...)
	}
	return fs, errors.Join(errs...)
}

func natsStreamInfoFindings(c jetstream.StreamConfig, cl *jetstream.ClusterInfo) []Finding {
	var fs []Finding
	target := "stream " + c.Name
	if c.Storage == jetstream.MemoryStorage {
		fs = append(fs, Finding{System: "nats", Target: target, Setting: "storage", Value: "memory", Want: "file",
			Risk: "the stream lives in memory: a restart of its servers loses every acknowledged message",
			Fix:  "recreate the stream with storage file (nats stream add " + c.Name + " --storage file ...; a stream's storage cannot be edited)"})
	}
	if c.Replicas < 3 {
		replicas := c.Replicas
		if replicas == 0 {
			replicas = 1
		}
		risk := "one copy of each message: a lost disk or server loses acknowledged messages"
		if replicas == 2 {
			risk = "two copies need both servers for a quorum: one server down stops every write"
		}
		fix := "nats stream edit " + c.Name + " --replicas 3"
		if cl == nil || len(cl.Replicas) == 0 && cl.Name == "" {
			fix = "run JetStream as a cluster of three servers, then " + fix
		}
		fs = append(fs, Finding{System: "nats", Target: target, Setting: "replicas", Value: fmt.Sprint(replicas), Want: ">= 3",
			Risk: risk, Fix: fix})
	}
	return fs
}

// timeLeft is ctx's time to its deadline, or DefaultTimeout.
func timeLeft(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return time.Until(d)
	}
	return DefaultTimeout
}
