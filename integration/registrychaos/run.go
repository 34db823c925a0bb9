package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// report is what a run measured, for the verdict line.
type report struct {
	verdict   Verdict
	ledger    *ledger
	faults    []faultRecord
	converged time.Duration // -1: never within -converge-timeout
	readAll   time.Duration
	auditOK   bool
	writers   int
	versions  int
	schemas   int
	elapsed   time.Duration
}

// run starts the instances on a fresh database, runs the writers and the
// faults, waits for recovery and judges. An error means the run could not
// be done; a verdict with failures that it found something.
func run(ctx context.Context, cfg config, out io.Writer) (report, error) {
	started := time.Now()
	if _, err := os.Stat(cfg.ops); err != nil {
		return report{}, fmt.Errorf("-ops %s: %w (build it with make build)", cfg.ops, err)
	}
	dir, err := os.MkdirTemp("", "registrychaos-")
	if err != nil {
		return report{}, err
	}
	keep := cfg.keep
	defer func() {
		if keep {
			fmt.Fprintf(out, "registry-chaos: logs kept in %s\n", dir)
			return
		}
		os.RemoveAll(dir)
	}()

	db, err := createDatabase(ctx, cfg.pgDSN, cfg.pgDir, cfg.syncCommit, filepath.Join(dir, "postgres.log"))
	if err != nil {
		return report{}, err
	}
	defer db.log.Close()
	defer func() {
		if keep {
			fmt.Fprintf(out, "registry-chaos: database %s kept\n", db.name)
			return
		}
		if err := db.drop(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintf(out, "registry-chaos: could not drop database %s: %v\n", db.name, err)
		}
	}()

	var insts []*instance
	defer func() {
		for _, in := range insts {
			in.close()
		}
	}()
	for i := range instances {
		name := fmt.Sprintf("r%d", i+1)
		in, err := newInstance(name, cfg.ops, db.dsn, filepath.Join(dir, name+".log"), cfg.requestTimeout, cfg.readTimeout)
		if err != nil {
			return report{}, err
		}
		insts = append(insts, in)
		// One at a time: the first creates the tables.
		if err := in.start(ctx); err != nil {
			keep = true
			return report{}, err
		}
	}
	if err := insts[0].client.setGlobalLevel(ctx, "NONE"); err != nil {
		keep = true
		return report{}, fmt.Errorf("PUT /config NONE on r1: %w", err)
	}

	subjects := make([]string, cfg.subjects)
	for i := range subjects {
		subjects[i] = fmt.Sprintf("chaos-%d-value", i+1)
	}
	nWriters := instances * cfg.writers
	perWriter := (cfg.writes + nWriters - 1) / nWriters
	l := &ledger{}
	rng := rand.New(rand.NewPCG(uint64(cfg.seed), 0))
	begin := time.Now()
	wctx, stopWriters := context.WithCancel(ctx)
	defer stopWriters()
	var wg sync.WaitGroup
	for i := range nWriters {
		w := &writer{id: i + 1, inst: insts[i%instances], subjects: subjects, ops: perWriter, repeat: cfg.repeat,
			opTimeout: cfg.opTimeout, rng: rand.New(rand.NewPCG(rng.Uint64(), uint64(i))), l: l}
		wg.Go(func() { w.run(wctx) })
	}
	writesDone := make(chan struct{})
	go func() { wg.Wait(); close(writesDone) }()

	sched := schedule{total: perWriter * nWriters, killAt: 0.2, stopAt: 0.45, dbAt: 0.7,
		restartAfter: cfg.restartAfter, stopFor: cfg.stopFor, dbDown: cfg.dbDown}
	faults, ferr := runFaults(wctx, sched, begin, l, insts[1], insts[2], insts, db, writesDone)
	for _, f := range faults {
		fmt.Fprintf(out, "registry-chaos: %s\n", f)
	}
	if ferr != nil {
		stopWriters()
		wg.Wait()
		keep = true
		return report{}, fmt.Errorf("faults: %w", ferr)
	}
	<-writesDone
	if err := ctx.Err(); err != nil {
		return report{}, err
	}
	recovered := time.Now()
	fmt.Fprintf(out, "registry-chaos: writes done at %.1fs; %d registrations acknowledged in %d attempts\n",
		recovered.Sub(begin).Seconds(), l.acked.Load(), l.attempts.Load())
	if s := l.errorSummary(); s != "" {
		fmt.Fprintf(out, "registry-chaos: attempts retried: %s\n", s)
	}

	conv, err := converge(ctx, insts, db, recovered, cfg.convergeTimeout)
	if err != nil {
		keep = true
		return report{}, fmt.Errorf("%w; see the logs in %s", err, dir)
	}
	views, converged := conv.views, conv.agreed
	if converged >= 0 {
		fmt.Fprintf(out, "registry-chaos: every instance answered what the database holds %d ms after recovery (probe round %d); reading all their answers took %d ms more\n",
			converged.Milliseconds(), conv.rounds, conv.readAll.Milliseconds())
	}
	acks := l.snapshot()
	v := Judge(acks, views)
	audit, err := db.verifyAudit(ctx, cfg.ops)
	if err != nil {
		v.Failures = append(v.Failures, "audit: "+err.Error())
	} else {
		fmt.Fprintf(out, "registry-chaos: %s\n", audit)
	}
	if l.rejected.Load() > 0 {
		for _, r := range l.rejections {
			v.Failures = append(v.Failures, "rejected: "+r)
		}
	}
	switch {
	case converged < 0:
		v.Failures = append(v.Failures, fmt.Sprintf("converged: the instances did not answer what the database holds within %s of recovery", cfg.convergeTimeout))
		for _, d := range conv.lastDiff {
			v.Failures = append(v.Failures, "converged: last probe: "+d)
		}
	case converged > cfg.convergeLimit:
		v.Failures = append(v.Failures, fmt.Sprintf("converged: the instances answered the same only %d ms after recovery, more than %s", converged.Milliseconds(), cfg.convergeLimit))
	}
	if !v.OK() {
		keep = true
	}
	r := report{verdict: v, ledger: l, faults: faults, converged: converged, readAll: conv.readAll, auditOK: err == nil, writers: nWriters, elapsed: time.Since(started)}
	for _, vs := range views[0].Versions {
		r.versions += len(vs)
	}
	r.schemas = len(views[0].Texts)
	return r, nil
}

// convergence is how the instances caught up after recovery.
type convergence struct {
	// views are the instances' whole views and the database's, as last read.
	views []View
	// agreed is the time from recovery to the end of the first probe round
	// in which every instance answered what the database holds; -1 when
	// none did within the timeout, with lastDiff saying how they differed.
	agreed   time.Duration
	lastDiff []string
	// rounds counts the probe rounds; readAll is how long reading every
	// instance's whole view took, after they agreed.
	rounds  int
	readAll time.Duration
}

// converge reads the database's view, probes every instance until each
// answers what the database holds (or timeout passes after recovered),
// then reads every instance's whole view.
func converge(ctx context.Context, insts []*instance, db *database, recovered time.Time, timeout time.Duration) (convergence, error) {
	c := convergence{agreed: -1}
	deadline := recovered.Add(timeout)
	var dbView View
	for {
		var err error
		if dbView, err = db.readView(ctx); err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return c, fmt.Errorf("the database's view could not be read within %s of recovery: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := probeOf(dbView)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		c.rounds++
		probes := make([]View, len(insts))
		errs := make([]error, len(insts))
		var wg sync.WaitGroup
		for i, in := range insts {
			wg.Go(func() { probes[i], errs[i] = in.reader.probe(ctx, in.name) })
		}
		wg.Wait()
		c.lastDiff = nil
		for i := range insts {
			if errs[i] != nil {
				c.lastDiff = append(c.lastDiff, errs[i].Error())
				continue
			}
			c.lastDiff = append(c.lastDiff, Diff(want, probes[i])...)
		}
		if len(c.lastDiff) == 0 {
			c.agreed = time.Since(recovered)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	t0 := time.Now()
	for {
		views := make([]View, len(insts))
		errs := make([]error, len(insts))
		var wg sync.WaitGroup
		for i, in := range insts {
			wg.Go(func() { views[i], errs[i] = in.reader.readView(ctx, in.name) })
		}
		wg.Wait()
		err := errors.Join(errs...)
		if err == nil {
			c.readAll = time.Since(t0)
			c.views = append(views, dbView)
			return c, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return c, fmt.Errorf("the instances' answers could not be read within %s of recovery: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// line is the verdict line.
func (r report) line() string {
	v, l := r.verdict, r.ledger
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	conv := "never"
	if r.converged >= 0 {
		conv = fmt.Sprint(r.converged.Milliseconds())
	}
	kills, stops, dbs := 0, 0, 0
	for _, f := range r.faults {
		switch {
		case strings.HasPrefix(f.what, "SIGKILL"):
			kills++
		case strings.HasPrefix(f.what, "SIGSTOP"):
			stops++
		default:
			dbs++
		}
	}
	return fmt.Sprintf("registry-chaos: instances=%d acked=%d lost=%d ids_unique=%s versions_contiguous=%s converged_ms=%s kills=%d stops=%d db_restarts=%d read_all_ms=%d audit_chain=%s writers=%d versions=%d schemas=%d attempts=%d unknown=%d failed=%d rejected=%d abandoned=%d elapsed=%.1fs",
		instances, v.Acked, v.Lost, yes(v.IDsUnique), yes(v.VersionsContiguous), conv, kills, stops, dbs, r.readAll.Milliseconds(), yes(r.auditOK),
		r.writers, r.versions, r.schemas, l.attempts.Load(), l.unknown.Load(), l.failed.Load(), l.rejected.Load(), l.abandoned.Load(), r.elapsed.Seconds())
}
