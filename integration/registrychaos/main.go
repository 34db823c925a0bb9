// Command registrychaos runs the schema registry as a cluster under faults
// and checks, from the instances' and the database's answers, that no
// acknowledged registration was lost (make chaos-registry).
//
// It starts three `msgcontract-ops registry serve` instances (r1, r2, r3)
// on one fresh database in the PostgreSQL cluster of
// scripts/with-postgres.sh, sets the global compatibility level to NONE,
// and runs -writers writers on each instance, registering -writes schemas
// in all (POST /subjects/{s}/versions) across -subjects subjects: mostly
// schemas of their own, and a -repeat share of schemas acknowledged before,
// under a random subject, which must get the id they already have. Each
// registration is retried, on a refused, reset or timed-out request or a
// 5xx, until it is acknowledged: one whose answer was lost may be
// registered or not, one acknowledged must be there.
//
// Mid-write, at 20%, 45% and 70% of the registrations acknowledged, one
// after the other: r2 is SIGKILLed (with its schema workers: its process
// group) and started again; r3's server process is SIGSTOPped for
// -stop-for and then SIGCONTinued; PostgreSQL is stopped as a crash does ($MSGCONTRACT_PG_DIR/kill.sh,
// an immediate shutdown) and started again after -db-down. When the
// writes are done and every fault has healed (recovery), it reads each
// instance's answers (GET /subjects, /subjects/{s}/versions,
// /subjects/{s}/versions/{v}, /schemas/ids/{id}) and the database's tables
// until all four agree, and checks:
//
//   - no acknowledged registration lost: each (subject, schema) answered
//     200 with id X is a version of the subject with id X, and X resolves
//     to the same schema text, on every instance and in the database;
//   - ids unique and stable: one id per schema, in the acknowledgements
//     and in every answer, and no id resolving to two schemas;
//   - versions contiguous: every subject's versions are 1..n;
//   - converged: every instance answers what the database holds within
//     -converge-limit of recovery (converged_ms: the end of the first
//     round of GET /subjects, each subject's versions, its latest version
//     and that version's schema in which all three did; read_all_ms: how
//     long reading all their answers then took, which must agree too);
//   - the audit log every instance appended to is one unbroken chain
//     (msgcontract-ops registry audit verify).
//
// It prints the faults as they struck, then
//
//	registry-chaos: instances=3 acked=N lost=0 ids_unique=yes versions_contiguous=yes converged_ms=M kills=1 stops=1 db_restarts=1 read_all_ms=R audit_chain=yes ...
//
// and each failed check on a line of its own naming the subject or id
// that broke. It exits 0 when every check passed, 1 when one failed
// (keeping the instances' logs and the database), 2 when the run could
// not be done.
//
// The run's database has synchronous_commit = on, PostgreSQL's default:
// scripts/pg-start.sh runs its cluster with off, under which a crash of
// the database loses its last commits, acknowledged or not (-sync-commit
// off shows it).
//
//	make chaos-registry
//	bash scripts/with-postgres.sh go run ./integration/registrychaos -ops bin/msgcontract-ops -writes 300
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// instances is the cluster's size: one instance killed, one paused, one
// left alone.
const instances = 3

type config struct {
	ops, pgDSN, pgDir string
	syncCommit        string
	writes, writers   int
	subjects          int
	repeat            float64
	restartAfter      time.Duration
	stopFor, dbDown   time.Duration
	requestTimeout    time.Duration
	readTimeout       time.Duration
	opTimeout         time.Duration
	convergeLimit     time.Duration
	convergeTimeout   time.Duration
	timeout           time.Duration
	seed              int64
	keep              bool
}

func main() {
	var cfg config
	flag.StringVar(&cfg.ops, "ops", "bin/msgcontract-ops", "the msgcontract-ops binary whose `registry serve` runs the instances (make build)")
	flag.StringVar(&cfg.pgDSN, "pg", os.Getenv("MSGCONTRACT_PG_DSN"), "PostgreSQL cluster to make the run's database in (default $MSGCONTRACT_PG_DSN, set by scripts/with-postgres.sh)")
	flag.StringVar(&cfg.pgDir, "pg-dir", os.Getenv("MSGCONTRACT_PG_DIR"), "the cluster's directory, holding the kill.sh and start.sh that restart it (default $MSGCONTRACT_PG_DIR, set by scripts/with-postgres.sh)")
	flag.StringVar(&cfg.syncCommit, "sync-commit", "on", "synchronous_commit of the run's database: on (PostgreSQL's default) or off (a database crash may lose acknowledged commits)")
	flag.IntVar(&cfg.writes, "writes", 1500, "registrations in all, split among the writers; each is retried until acknowledged")
	flag.IntVar(&cfg.writers, "writers", 2, "concurrent writers on each of the 3 instances")
	flag.IntVar(&cfg.subjects, "subjects", 12, "subjects the writers register under")
	flag.Float64Var(&cfg.repeat, "repeat", 0.15, "share of registrations that send a schema acknowledged before, under a random subject (it must keep its id)")
	flag.DurationVar(&cfg.restartAfter, "restart-after", 500*time.Millisecond, "how long the SIGKILLed instance stays down before it is started again")
	flag.DurationVar(&cfg.stopFor, "stop-for", 3*time.Second, "how long the SIGSTOPped instance stays paused")
	flag.DurationVar(&cfg.dbDown, "db-down", time.Second, "how long PostgreSQL stays down between its kill and its start")
	flag.DurationVar(&cfg.requestTimeout, "request-timeout", 2*time.Second, "a registration without an answer by then has an unknown outcome and is retried")
	flag.DurationVar(&cfg.readTimeout, "read-timeout", 10*time.Second, "longest wait for one read after recovery")
	flag.DurationVar(&cfg.opTimeout, "op-timeout", time.Minute, "a registration not acknowledged by then is given up (counted as abandoned)")
	flag.DurationVar(&cfg.convergeLimit, "converge-limit", time.Second, "the instances must answer the same as the database within this long of recovery")
	flag.DurationVar(&cfg.convergeTimeout, "converge-timeout", 30*time.Second, "stop reading the instances' answers this long after recovery")
	flag.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "give the run up after this long (exit 2)")
	flag.Int64Var(&cfg.seed, "seed", time.Now().UnixNano(), "random seed of the writers' choices")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the instances' logs and the run's database also when every check passes")
	flag.Parse()
	if err := cfg.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "registry-chaos:", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()
	fmt.Printf("registry-chaos: %d instances on PostgreSQL, %d writers, %d registrations over %d subjects, seed %d\n",
		instances, instances*cfg.writers, cfg.writes, cfg.subjects, cfg.seed)
	r, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("%w: the run took longer than -timeout %s", err, cfg.timeout)
		case errors.Is(ctx.Err(), context.Canceled):
			err = fmt.Errorf("interrupted (SIGINT or SIGTERM); every instance was stopped: %w", err)
		}
		fmt.Fprintln(os.Stderr, "registry-chaos: the run could not be done:", err)
		os.Exit(2)
	}
	fmt.Println(r.line())
	for _, f := range r.verdict.Failures {
		fmt.Println("registry-chaos: FAIL", f)
	}
	if !r.verdict.OK() {
		os.Exit(1)
	}
}

func (c config) validate() error {
	switch {
	case c.pgDSN == "" || c.pgDir == "":
		return errors.New("no PostgreSQL: run under scripts/with-postgres.sh (make chaos-registry), or pass -pg and -pg-dir")
	case c.writes < 10:
		return fmt.Errorf("-writes %d: at least 10, so that the faults land mid-write", c.writes)
	case c.writers < 1 || c.subjects < 1:
		return errors.New("-writers and -subjects must be at least 1")
	case c.repeat < 0 || c.repeat > 1:
		return fmt.Errorf("-repeat %g: a share between 0 and 1", c.repeat)
	case c.syncCommit != "on" && c.syncCommit != "off":
		return fmt.Errorf("-sync-commit %q: on or off", c.syncCommit)
	}
	return nil
}
