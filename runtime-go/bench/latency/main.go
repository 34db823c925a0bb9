// Command latency measures how long a message takes from the producer's
// business transaction to the consumer's effect commit, the path a
// payment callback takes:
//
//	producer transaction (a business row and the outbox row, committed)
//	→ relay (woken by Relay.Notify) → broker → consumer → handler
//	→ effect commit (the dedup claim and the business row in one transaction)
//
// Each message is timed from the moment its producer transaction was due
// to begin (an open-loop schedule at the offered rate, so a stall delays
// every message due meanwhile: no coordinated omission) to the end of the
// consumer's span for it, which the runtime ends right after the commit
// that made the effect durable. Latencies go into an HdrHistogram.
//
// For each case (transport/database) it first measures the maximum: -max
// messages produced as fast as -producers concurrent producer
// transactions go, timed from the first begin to the last effect commit.
// Then, after a -warmup at the rate that is not recorded, it records
// -duration at -rate msg/s and again at 80% of the maximum, and prints one
// line per case and rate:
//
//	latency <transport>/<db> rate=<msg/s> p50=<ms> p99=<ms> p999=<ms> max=<ms>
//
// and writes, into -out, each run's percentile distribution
// (<transport>-<db>-<rate>.hgrm, HdrHistogram's text format) and one SVG
// plot per load with every case's percentile curve (latency-<load>.svg).
//
// The producers, relay and consumer share one process and one clock; each
// case has databases of its own: on SQLite a producer file and a consumer
// file, on PostgreSQL two schemas, on MariaDB two databases.
//
//	make bench-latency
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type config struct {
	cases     []benchCase
	rate      float64
	duration  time.Duration
	warmup    time.Duration
	maxN      int
	producers int
	out       string
}

// benchCase is one transport over one business database.
type benchCase struct{ transport, db string }

func (c benchCase) String() string { return c.transport + "/" + c.db }

var (
	transports = []string{"sqlite", "nats", "kafka"}
	databases  = []string{"sqlite", "postgres", "mysql"}
)

func main() {
	var cfg config
	cases := flag.String("cases", "all", "comma-separated transport/db pairs (transports: sqlite, nats, kafka; databases: sqlite, postgres, mysql), or all: every pair whose servers are reachable through the environment (MSGCONTRACT_KAFKA_BROKERS, MSGCONTRACT_PG_DSN, MSGCONTRACT_MYSQL_DSN)")
	flag.Float64Var(&cfg.rate, "rate", 1000, "the fixed offered rate, msg/s")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "recorded time at each rate")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "unrecorded time at each rate before it")
	flag.IntVar(&cfg.maxN, "max", 20000, "messages of the maximum-throughput run")
	flag.IntVar(&cfg.producers, "producers", 16, "concurrent producer transactions (a server database commits them in groups)")
	flag.StringVar(&cfg.out, "out", ".build/bench-latency", "directory for the .hgrm files and the SVG plots")
	flag.Parse()
	var err error
	if cfg.cases, err = parseCases(*cases); err == nil {
		err = run(cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-latency:", err)
		os.Exit(1)
	}
}

// parseCases reads -cases. "all" keeps the pairs whose servers the
// environment names; a named pair whose server is missing is an error.
func parseCases(s string) ([]benchCase, error) {
	var out []benchCase
	if s == "all" {
		for _, t := range transports {
			for _, d := range databases {
				if c := (benchCase{t, d}); c.missing() == "" {
					out = append(out, c)
				}
			}
		}
		if len(out) == 0 {
			return nil, errors.New("no case can run")
		}
		return out, nil
	}
	for _, p := range strings.Split(s, ",") {
		t, d, ok := strings.Cut(strings.TrimSpace(p), "/")
		c := benchCase{t, d}
		switch {
		case !ok || !contains(transports, t) || !contains(databases, d):
			return nil, fmt.Errorf("-cases: %q is not transport/db (transports %v, databases %v)", p, transports, databases)
		case c.missing() != "":
			return nil, fmt.Errorf("-cases: %s needs %s: run it through make bench-latency, which starts the servers", c, c.missing())
		}
		out = append(out, c)
	}
	return out, nil
}

// missing names the environment variable the case needs and lacks.
func (c benchCase) missing() string {
	need := map[string]string{"kafka": envKafka, "postgres": envPG, "mysql": envMySQL}
	for _, k := range []string{c.transport, c.db} {
		if v := need[k]; v != "" && os.Getenv(v) == "" {
			return v
		}
	}
	return ""
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func run(cfg config) error {
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	ctx := context.Background()
	plots := map[string]*plot{"fixed": newPlot(fmt.Sprintf("at %.0f msg/s", cfg.rate)), "max80": newPlot("at 80% of each case's maximum")}
	for _, c := range cfg.cases {
		r, err := openRig(ctx, c)
		if err != nil {
			return fmt.Errorf("%s: set up: %w", c, err)
		}
		res, err := measureCase(ctx, cfg, r)
		r.close()
		if err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
		fmt.Printf("maximum %s=%.0f msg/s (%d messages, %d producers)\n", c, res.max, cfg.maxN, cfg.producers)
		for _, l := range res.loads {
			h := l.hist
			fmt.Printf("latency %s rate=%.0f p50=%s p99=%s p999=%s max=%s\n", c, l.rate,
				ms(h.ValueAtQuantile(50)), ms(h.ValueAtQuantile(99)), ms(h.ValueAtQuantile(99.9)), ms(h.Max()))
			fmt.Printf("  legs p50/p99 ms: producer %s/%s relay %s/%s consumer %s/%s\n",
				ms(l.legs[0].ValueAtQuantile(50)), ms(l.legs[0].ValueAtQuantile(99)),
				ms(l.legs[1].ValueAtQuantile(50)), ms(l.legs[1].ValueAtQuantile(99)),
				ms(l.legs[2].ValueAtQuantile(50)), ms(l.legs[2].ValueAtQuantile(99)))
			name := fmt.Sprintf("%s-%s-%.0f.hgrm", c.transport, c.db, l.rate)
			if err := writeHgrm(filepath.Join(cfg.out, name), h); err != nil {
				return err
			}
			plots[l.load].add(fmt.Sprintf("%s %.0f/s", c, l.rate), h)
		}
	}
	for load, p := range plots {
		path := filepath.Join(cfg.out, "latency-"+load+".svg")
		if err := os.WriteFile(path, p.svg(), 0o644); err != nil {
			return err
		}
		fmt.Println("plot:", path)
	}
	return nil
}

// ms formats a histogram value (microseconds) as milliseconds.
func ms(us int64) string { return fmt.Sprintf("%.2f", float64(us)/1000) }
