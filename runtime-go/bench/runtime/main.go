// Command runtime measures what effectively-once costs on SQLite, each
// runtime mode against a bare loop committing in the same transaction
// size:
//
//   - bare-per-message: the business INSERT, one transaction per message;
//   - default: the runtime as consumer.Config's defaults leave it: a fetch
//     of up to 64 messages shares one transaction (savepoints only after a
//     handler failure);
//   - per-message: the runtime with PerMessageTx, one transaction per
//     message;
//   - bare-batch: the business INSERT, one transaction per -fetch messages;
//   - batch: the default mode with fetches of -fetch messages.
//
// The runtime modes run on the embedded transport with its queue in the
// business database file, the layout that lets the consumer acknowledge
// inside the business transaction. Publishing the messages is timed
// separately and not counted. Each mode runs -runs times on fresh files;
// medians are reported (a shared machine makes single runs noisy), then
//
//	ratio default/bare-per-message=X (...)
//	ratio batch/bare-batch=Y (...)
//	ratio per-message/bare-per-message=Z (...)
//
// where a ratio is time per message of the runtime mode over its bare loop.
//
//	go run ./bench/runtime -n 50000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"
)

func main() {
	n := flag.Int("n", 50000, "messages")
	fetch := flag.Int("fetch", 256, "deliveries per fetch and per transaction in batch mode (and in bare-batch)")
	workers := flag.Int("workers", 0, "consumer workers in both runtime modes; 0 keeps consumer.Config's default")
	runs := flag.Int("runs", 3, "repetitions; the median of each mode is reported")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	only := flag.String("only", "", "run only this mode (for profiling); no ratios")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench-runtime:", err)
			os.Exit(1)
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(*n, *fetch, *workers, *runs, *only); err != nil {
		fmt.Fprintln(os.Stderr, "bench-runtime:", err)
		os.Exit(1)
	}
}

// mode is one measured side.
type mode struct {
	name string
	txs  string // messages per transaction
	run  func(ctx context.Context, dir string) (result, error)
	got  []result
}

type result struct{ consume, publish time.Duration }

func run(n, fetch, workers, runs int, only string) error {
	ctx := context.Background()
	modes := []*mode{
		{name: "bare-per-message", txs: "one per transaction", run: func(ctx context.Context, dir string) (result, error) {
			return runBare(ctx, dir, n, 1)
		}},
		{name: "default", txs: "a fetch of up to 64 per transaction", run: func(ctx context.Context, dir string) (result, error) {
			return runRuntime(ctx, dir, n, runtimeMode{workers: workers})
		}},
		{name: "per-message", txs: "one per transaction", run: func(ctx context.Context, dir string) (result, error) {
			return runRuntime(ctx, dir, n, runtimeMode{workers: workers, perMessage: true})
		}},
		{name: "bare-batch", txs: fmt.Sprintf("%d per transaction", fetch), run: func(ctx context.Context, dir string) (result, error) {
			return runBare(ctx, dir, n, fetch)
		}},
		{name: "batch", txs: fmt.Sprintf("a fetch of up to %d per transaction", fetch), run: func(ctx context.Context, dir string) (result, error) {
			return runRuntime(ctx, dir, n, runtimeMode{workers: workers, fetch: fetch})
		}},
	}
	if only != "" {
		i := slices.IndexFunc(modes, func(m *mode) bool { return m.name == only })
		if i < 0 {
			return fmt.Errorf("-only %q: no such mode (bare-per-message, default, per-message, bare-batch, batch)", only)
		}
		modes = modes[i : i+1]
	}
	for i := range runs {
		for _, m := range modes {
			dir, err := os.MkdirTemp("", "msgcontract-bench-")
			if err != nil {
				return err
			}
			r, err := m.run(ctx, filepath.Join(dir, "business.db"))
			os.RemoveAll(dir)
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			m.got = append(m.got, r)
			fmt.Printf("run %d: %s %v\n", i+1, m.name, r.consume.Round(time.Millisecond))
		}
	}
	fmt.Printf("%d messages, medians of %d runs, SQLite; runtime modes with the queue in the business database\n", n, runs)
	for _, m := range modes {
		r := m.median()
		line := fmt.Sprintf("%-16s %8.0f msg/s  %-8v %s", m.name, rate(n, r.consume), r.consume.Round(time.Millisecond), m.txs)
		if r.publish > 0 {
			line += fmt.Sprintf("; publish %v, not counted", r.publish.Round(time.Millisecond))
		}
		fmt.Println(line)
	}
	if only != "" {
		return nil
	}
	ratio := func(a, b *mode) {
		ra, rb := a.median().consume, b.median().consume
		fmt.Printf("ratio %s/%s=%.2f (%s %.0f msg/s, %s %.0f msg/s)\n", a.name, b.name, ra.Seconds()/rb.Seconds(),
			a.name, rate(n, ra), b.name, rate(n, rb))
	}
	ratio(modes[1], modes[0])
	ratio(modes[4], modes[3])
	ratio(modes[2], modes[0])
	return nil
}

func (m *mode) median() result {
	s := slices.Clone(m.got)
	slices.SortFunc(s, func(a, b result) int { return int(a.consume - b.consume) })
	return s[len(s)/2]
}

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }
