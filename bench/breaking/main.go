// Command breaking runs `msgcontract breaking` and `buf breaking` over the
// compatibility corpus (testdata/compat), as whole processes on the same
// pairs, side by side:
//
//	-mode bench    prints "ratio breaking/buf=X", total wall times over the corpus
//	-mode compare  prints how often the two agree, per buf category and per
//	               msgcontract rule category, and every pair they disagree on
//
// `make bench-breaking` and `make compare-buf` run it after installing buf.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/msgcontract/msgcontract/registry/compat/corpus"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.mode, "mode", "bench", "bench or compare")
	flag.StringVar(&cfg.buf, "buf", ".tools/bin/buf", "the buf binary (an absolute path is used as is)")
	flag.StringVar(&cfg.msgcontract, "msgcontract", "bin/msgcontract", "the msgcontract binary")
	flag.StringVar(&cfg.corpus, "corpus", "testdata/compat", "the corpus")
	flag.StringVar(&cfg.contracts, "contracts", "contracts", "where msgcontract/v1/options.proto is, for buf")
	flag.IntVar(&cfg.rounds, "rounds", 1, "bench: passes over the corpus")
	flag.Parse()
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench-breaking:", err)
		os.Exit(1)
	}
}

type config struct {
	mode, buf, msgcontract, corpus, contracts string
	rounds                                    int
}

func run(cfg config) error {
	for _, bin := range []string{cfg.buf, cfg.msgcontract} {
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%w; `make build` builds msgcontract, scripts/install-buf.sh installs buf", err)
		}
	}
	var err error
	if cfg.buf, err = filepath.Abs(cfg.buf); err != nil {
		return err
	}
	if cfg.msgcontract, err = filepath.Abs(cfg.msgcontract); err != nil {
		return err
	}
	cases, err := corpus.Load(cfg.corpus)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "bench-breaking-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	pairs, err := preparePairs(tmp, cfg.contracts, cases)
	if err != nil {
		return err
	}
	switch cfg.mode {
	case "bench":
		return bench(cfg, pairs)
	case "compare":
		return compare(cfg, pairs)
	}
	return fmt.Errorf("-mode %q: use bench or compare", cfg.mode)
}

// pair is a corpus case copied so that buf can compile it: both sides get
// msgcontract/v1/options.proto, which msgcontract has built in. Both tools
// are given the same copies.
type pair struct {
	name, prev, cur string
}

func preparePairs(tmp, contracts string, cases []corpus.Case) ([]pair, error) {
	options, err := os.ReadFile(filepath.Join(contracts, "msgcontract", "v1", "options.proto"))
	if err != nil {
		return nil, err
	}
	var out []pair
	for _, c := range cases {
		p := pair{name: c.Name, prev: filepath.Join(tmp, c.Name, "prev"), cur: filepath.Join(tmp, c.Name, "cur")}
		for _, side := range [][2]string{{c.Prev(), p.prev}, {c.Cur(), p.cur}} {
			if err := os.CopyFS(side[1], os.DirFS(side[0])); err != nil {
				return nil, err
			}
			dst := filepath.Join(side[1], "msgcontract", "v1", "options.proto")
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return nil, err
			}
			if err := os.WriteFile(dst, options, 0o644); err != nil {
				return nil, err
			}
		}
		out = append(out, p)
	}
	return out, nil
}
