package main

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"time"
)

// bench times whole processes: for each pair, msgcontract breaking and
// buf breaking (WIRE_JSON) one after the other, alternating which goes
// first, so both see the same machine load.
func bench(cfg config, pairs []pair) error {
	var mc, bf []time.Duration
	for r := 0; r < cfg.rounds; r++ {
		for i, p := range pairs {
			runs := []func() (time.Duration, error){
				func() (time.Duration, error) { return timed(msgcontractCmd(cfg, p), 0, 1) },
				func() (time.Duration, error) { return timed(bufCmd(cfg, p, "WIRE_JSON", false), 0, 100) },
			}
			if (i+r)%2 == 1 {
				runs[0], runs[1] = runs[1], runs[0]
			}
			for k, f := range runs {
				d, err := f()
				if err != nil {
					return fmt.Errorf("%s: %w", p.name, err)
				}
				if (k == 0) == ((i+r)%2 == 0) {
					mc = append(mc, d)
				} else {
					bf = append(bf, d)
				}
			}
		}
	}
	tm, tb := total(mc), total(bf)
	fmt.Printf("bench-breaking: %d pairs x %d round(s), whole-process wall time, side by side\n", len(pairs), cfg.rounds)
	fmt.Printf("msgcontract breaking --against PREV CUR: total %s, median %s per pair\n", tm.Round(time.Millisecond), median(mc).Round(10*time.Microsecond))
	fmt.Printf("buf breaking CUR --against PREV (WIRE_JSON): total %s, median %s per pair\n", tb.Round(time.Millisecond), median(bf).Round(10*time.Microsecond))
	fmt.Printf("ratio breaking/buf=%.3f\n", float64(tm)/float64(tb))
	return nil
}

func msgcontractCmd(cfg config, p pair, extra ...string) *exec.Cmd {
	args := append([]string{"breaking", "--against", p.prev}, extra...)
	return exec.Command(cfg.msgcontract, append(args, p.cur)...)
}

// bufCmd checks cur against prev with the given rules (categories or
// rule IDs, comma-separated), each directory its own v2 module, run from
// the pair's directory.
func bufCmd(cfg config, p pair, use string, jsonOut bool) *exec.Cmd {
	conf := fmt.Sprintf(`{"version":"v2","modules":[{"path":"cur"}],"breaking":{"use":[%s]}}`, quoteList(use))
	args := []string{"breaking", "cur", "--against", "prev", "--config", conf, "--against-config", `{"version":"v2","modules":[{"path":"prev"}]}`}
	if jsonOut {
		args = append(args, "--error-format", "json")
	}
	cmd := exec.Command(cfg.buf, args...)
	cmd.Dir = filepath.Dir(p.cur)
	return cmd
}

// timed runs cmd and accepts only the given exit codes.
func timed(cmd *exec.Cmd, okCodes ...int) (time.Duration, error) {
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	return d, checkExit(cmd, err, out, okCodes)
}

func checkExit(cmd *exec.Cmd, err error, out []byte, okCodes []int) error {
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return err
	}
	for _, ok := range okCodes {
		if code == ok {
			return nil
		}
	}
	return fmt.Errorf("%s exited %d:\n%s", cmd.Path, code, out)
}

func total(ds []time.Duration) time.Duration {
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}
