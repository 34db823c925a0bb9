// Command runtime measures what effectively-once costs on SQLite: each
// runtime mode against a bare loop that consumes the same queue in the
// same transaction size.
//
// Every side but the ceiling starts from the same state: a fresh business
// database holding the embedded queue (sqlitequeue) with -n envelopes
// published to the group's topic. Publishing is timed apart and printed,
// never counted. The sides, the default first:
//
//   - default: the runtime as consumer.Config's defaults leave it (a fetch
//     of up to 64 shares one transaction; the ack is in it, since the
//     queue lives in the business database);
//   - bare-per-message: the loop a team writes by hand over the same
//     table, one message per transaction: read the oldest ready row,
//     decode the envelope and payload, the business INSERT, delete the
//     row, commit;
//   - bare-fetch64: the same loop, 64 messages per transaction;
//   - per-message: the runtime with PerMessageTx;
//   - batch: the runtime with fetches of -fetch messages;
//   - bare-batch: the bare loop, -fetch messages per transaction;
//   - bare-batch-dedup: the same, also writing each message's dedup row
//     (the runtime's msg_dedup table): what the claim write costs;
//   - ceiling-insert-only: the business INSERTs alone, -fetch per
//     transaction, no queue: what SQLite can do at all, in no ratio.
//
// Each side runs -runs times on fresh files, interleaved; medians are
// reported (a shared machine makes single runs noisy), then
//
//	ratio default/bare-per-message=X (...)  what a user gets by default vs the first loop a user writes
//	ratio default/bare-fetch64=X (...)      the same transaction size
//	ratio batch/bare-batch=Y (...)
//	ratio batch/bare-batch-dedup=Y' (...)
//	ratio per-message/bare-per-message=Z (...)
//
// where a ratio is time per message of the runtime side over its bare
// loop.
//
//	go run ./bench/runtime -n 50000
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchstat"
)

// defaultFetch is consumer.Config's FetchSize default.
const defaultFetch = 64

func main() {
	n := flag.Int("n", 50000, "messages")
	fetch := flag.Int("fetch", 256, "deliveries per fetch and per transaction in batch mode (and in bare-batch)")
	workers := flag.Int("workers", 0, "consumer workers in the runtime modes; 0 keeps consumer.Config's default")
	runs := flag.Int("runs", 3, "repetitions; the median of each side is reported")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	only := flag.String("only", "", "run only this side (for profiling); no ratios")
	memprofile := flag.String("memprofile", "", "write an allocation profile of the whole run to this file")
	flag.Parse()
	if *memprofile != "" {
		runtime.MemProfileRate = 4096
		defer func() {
			if f, err := os.Create(*memprofile); err == nil {
				pprof.Lookup("allocs").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
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

// side is one measured loop.
type side struct {
	name string
	txs  string // messages per transaction
	run  func(ctx context.Context, path string) (result, error)
	got  []result
}

// result is one run: consume and publish wall time, the CPU time of the
// consume span (all threads) and the heap allocations made in it (all
// goroutines: the measuring loop's few are counted too).
type result struct {
	consume, publish, cpu time.Duration
	allocs                uint64
}

// mallocs is the process's heap allocations so far.
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

func run(n, fetch, workers, runs int, only string) error {
	ctx := context.Background()
	bare := func(txSize int, withDedup bool) func(ctx context.Context, path string) (result, error) {
		return func(ctx context.Context, path string) (result, error) {
			return runBare(ctx, path, n, txSize, withDedup)
		}
	}
	rt := func(rm runtimeMode) func(ctx context.Context, path string) (result, error) {
		rm.workers = workers
		return func(ctx context.Context, path string) (result, error) { return runRuntime(ctx, path, n, rm) }
	}
	batchTxs := fmt.Sprintf("%d per transaction", fetch)
	sides := []*side{
		{name: "default", txs: "a fetch of up to 64 per transaction", run: rt(runtimeMode{})},
		{name: "bare-per-message", txs: "one per transaction", run: bare(1, false)},
		{name: "bare-fetch64", txs: "64 per transaction", run: bare(defaultFetch, false)},
		{name: "per-message", txs: "one per transaction (PerMessageTx)", run: rt(runtimeMode{perMessage: true})},
		{name: "batch", txs: fmt.Sprintf("a fetch of up to %d per transaction", fetch), run: rt(runtimeMode{fetch: fetch})},
		{name: "bare-batch", txs: batchTxs, run: bare(fetch, false)},
		{name: "bare-batch-dedup", txs: batchTxs + "; plus the dedup row per message: what the claim write costs",
			run: bare(fetch, true)},
		{name: "ceiling-insert-only", txs: batchTxs + "; INSERTs alone, no queue read or ack: a ceiling, in no ratio",
			run: func(ctx context.Context, path string) (result, error) { return runInsertOnly(ctx, path, n, fetch) }},
	}
	if only != "" {
		i := slices.IndexFunc(sides, func(s *side) bool { return s.name == only })
		if i < 0 {
			return fmt.Errorf("-only %q: no such side", only)
		}
		sides = sides[i : i+1]
	}
	for i := range runs {
		for _, s := range sides {
			dir, err := os.MkdirTemp("", "msgcontract-bench-")
			if err != nil {
				return err
			}
			r, err := s.run(ctx, filepath.Join(dir, "business.db"))
			os.RemoveAll(dir)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			s.got = append(s.got, r)
			fmt.Printf("run %d: %s %v\n", i+1, s.name, r.consume.Round(time.Millisecond))
		}
	}
	fmt.Printf("%d messages, medians of %d runs, SQLite, queue in the business database; publish timed apart\n", n, runs)
	for _, s := range sides {
		line := benchstat.Line(s.name, n, s.consume(), s.txs)
		line += "; " + benchstat.PerMessage(s.cpu(), n) + fmt.Sprintf("; %.1f allocs/msg", float64(s.allocs())/float64(n))
		if p := s.publish(); p > 0 {
			line += fmt.Sprintf("; publish %v (%.0f msg/s), not counted", p.Round(time.Millisecond), benchstat.Rate(n, p))
		}
		fmt.Println(line)
	}
	if only != "" {
		return nil
	}
	by := func(name string) *side {
		return sides[slices.IndexFunc(sides, func(s *side) bool { return s.name == name })]
	}
	for _, r := range [][2]string{{"default", "bare-per-message"}, {"default", "bare-fetch64"},
		{"batch", "bare-batch"}, {"batch", "bare-batch-dedup"}, {"per-message", "bare-per-message"}} {
		fmt.Println(benchstat.Ratio(r[0], r[1], n, by(r[0]).consume(), by(r[1]).consume()))
	}
	return nil
}

func (s *side) consume() time.Duration {
	return s.median(func(r result) time.Duration { return r.consume })
}
func (s *side) publish() time.Duration {
	return s.median(func(r result) time.Duration { return r.publish })
}
func (s *side) cpu() time.Duration { return s.median(func(r result) time.Duration { return r.cpu }) }
func (s *side) allocs() uint64 {
	return uint64(s.median(func(r result) time.Duration { return time.Duration(r.allocs) }))
}

func (s *side) median(field func(result) time.Duration) time.Duration {
	var ds []time.Duration
	for _, r := range s.got {
		ds = append(ds, field(r))
	}
	return benchstat.Median(ds)
}
