package main

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/bench/internal/benchmsg"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb/mysqltest"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// restarter is a queue whose broker the parent restarts mid-run.
type restarter interface {
	maybeRestart(pending, total int) error
}

type plan struct {
	deliveries []*envelopepb.Envelope
	good       map[string]bool // keys that must have exactly one effect
	poison     map[string]bool // keys that must be dead-lettered
	dups       int
}

func makePlan(cfg config, rng *rand.Rand) (*plan, error) {
	p := &plan{good: map[string]bool{}, poison: map[string]bool{}}
	for i := range cfg.messages {
		key := "order:" + strconv.Itoa(i) + ":PAID"
		kind := kindOK
		switch r := rng.Float64(); {
		case r < 0.005:
			kind = "poison-decode"
		case r < 0.01:
			kind = kindPoisonCode
		case r < 0.02:
			kind = kindExhausted
		case r < 0.035:
			kind = kindTransient1
		case r < 0.06:
			kind = kindTransient2
		}
		env, err := event.NewEnvelope(benchmsg.Spec, wrapperspb.String(kind), key, event.Options{})
		if err != nil {
			return nil, err
		}
		if kind == "poison-decode" {
			env.Payload = []byte{0xff, 0xff, 0xff}
		}
		p.deliveries = append(p.deliveries, env)
		if kind == "poison-decode" || kind == kindPoisonCode || kind == kindExhausted {
			p.poison[key] = true
			continue
		}
		p.good[key] = true
		if rng.Float64() < 0.10/0.99 { // 10% of all messages get a duplicate delivery
			p.deliveries = append(p.deliveries, env)
			p.dups++
		}
	}
	rng.Shuffle(len(p.deliveries), func(i, j int) { p.deliveries[i], p.deliveries[j] = p.deliveries[j], p.deliveries[i] })
	return p, nil
}

func runParent(cfg config) (bool, error) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(cfg.seed), 0))
	if cfg.dir == "" {
		dir, err := os.MkdirTemp("", "msgcontract-chaos-")
		if err != nil {
			return false, err
		}
		defer os.RemoveAll(dir)
		cfg.dir = dir
	}
	p, err := makePlan(cfg, rng)
	if err != nil {
		return false, err
	}
	langs, err := parseMembers(cfg)
	if err != nil {
		return false, err
	}
	faults, err := parseFaults(cfg)
	if err != nil {
		return false, err
	}
	if cfg.rate < 0 || (cfg.rate > 0 && cfg.outbox) {
		return false, fmt.Errorf("-rate %d: want 0 (all at once) or a rate, and not with -outbox (its producer sets the pace)", cfg.rate)
	}
	switch cfg.business {
	case "sqlite":
	case "postgres":
		dsn := os.Getenv("MSGCONTRACT_PG_DSN")
		if dsn == "" {
			return false, fmt.Errorf("-business postgres needs MSGCONTRACT_PG_DSN (export MSGCONTRACT_PG_DSN=$(bash scripts/pg-start.sh))")
		}
		if cfg.pgDSN, _, err = benchmsg.FreshPostgres(dsn); err != nil {
			return false, err
		}
	case "mysql":
		base := os.Getenv(mysqltest.Env)
		if base == "" {
			return false, fmt.Errorf("-business mysql needs %s (run under scripts/with-mariadb.sh)", mysqltest.Env)
		}
		var drop func() error
		if cfg.mysqlDSN, drop, err = mysqltest.Create(base); err != nil {
			return false, err
		}
		defer drop()
	default:
		return false, fmt.Errorf("-business %q: want sqlite, postgres or mysql", cfg.business)
	}
	db, _, err := openBusiness(cfg)
	if err != nil {
		return false, err
	}
	defer db.Close()
	if err := benchmsg.CreateEffects(ctx, db); err != nil {
		return false, err
	}
	var q queue
	switch cfg.transport {
	case "sqlite", "sqlite-shared":
		if cfg.transport == "sqlite-shared" && cfg.business != "sqlite" {
			return false, fmt.Errorf("-transport sqlite-shared needs -business sqlite")
		}
		if cfg.transport == "sqlite-shared" && cfg.outbox {
			return false, fmt.Errorf("-outbox needs a transport of its own, not -transport sqlite-shared")
		}
		tr, err := sqlitequeue.Open(ctx, queueFile(cfg), sqlitequeue.Config{})
		if err != nil {
			return false, err
		}
		q = sqliteQueue{tr}
	case "nats":
		nq, url, err := startNATS(ctx, cfg.dir)
		if err != nil {
			return false, err
		}
		q, cfg.natsURL = nq, url
	case "kafka":
		kq, err := startKafka(ctx)
		if err != nil {
			return false, err
		}
		q, cfg.kafkaNS = kq, kq.ns
	case "rabbitmq":
		rq, err := startRabbitMQ(ctx)
		if err != nil {
			return false, err
		}
		q, cfg.rabbitPrefix = rq, rq.prefix
	case "rocketmq":
		rq, err := startRocketMQ(ctx, cfg, p)
		if err != nil {
			return false, err
		}
		q, cfg.rocketNS = rq, rq.ns
	default:
		return false, fmt.Errorf("-transport %q: want sqlite, sqlite-shared, nats, kafka, rabbitmq or rocketmq", cfg.transport)
	}
	defer q.close()
	if len(langs) > 1 || langs[0] != "go" {
		if err := migrateForMembers(ctx, cfg); err != nil {
			return false, err
		}
	}
	var pdb *sql.DB
	var pace *pacer
	how := "published"
	switch {
	case cfg.outbox:
		if pdb, err = stageOutbox(ctx, cfg, p.deliveries); err != nil {
			return false, err
		}
		defer pdb.Close()
		how = "planned, through a producer's outbox and a relay,"
	case cfg.rate > 0:
		how = fmt.Sprintf("publishing, at %d a second,", cfg.rate)
	default:
		for i := 0; i < len(p.deliveries); i += 1000 {
			if err := q.publish(ctx, p.deliveries[i:min(i+1000, len(p.deliveries))]); err != nil {
				return false, err
			}
		}
	}
	fmt.Printf("chaos: seed=%d %s %d deliveries (%d messages, %d duplicates, %d poison); %d consumer processes; transport %s, business database %s; faults %s\n",
		cfg.seed, how, len(p.deliveries), cfg.messages, p.dups, len(p.poison), cfg.procs, cfg.transport, cfg.business, faults)

	flog, tries := newFaultLog(), newAttempts()
	start := time.Now()
	// The consumers start and (on a broker) form their group, rebalancing
	// as each joins: retries due meanwhile wait as after a fault.
	flog.add("start", start, start.Add(recovery))
	if cfg.rate > 0 {
		pace = startPacer(q, p.deliveries, cfg.rate)
		defer pace.stop()
	}
	// The consumers, then with -outbox the producer and the relay.
	kids := make([]*child, cfg.procs)
	for i := range kids {
		kids[i] = &child{role: "consumer", lang: langs[i%len(langs)]}
	}
	if cfg.outbox {
		kids = append(kids, &child{role: "producer"}, &child{role: "relay"})
	}
	if faults[faultPartition] {
		// Each slot in a network namespace of its own, bridged to the
		// broker and the database (netns.go).
		sweepNetns()
		addrs := bridgeAddrs(cfg)
		for i, c := range kids {
			ns, err := newNetns(fmt.Sprintf("%s%ds%d", nsPrefix, os.Getpid(), i), addrs)
			if err != nil {
				return false, err
			}
			defer ns.close()
			c.ns = ns
		}
	}
	// A run that fails part way (a child that exited on its own, a timeout)
	// must not leave the others running: they would wait for a broker that
	// is gone, for good.
	defer func() {
		for _, c := range kids {
			if c.cmd != nil && !c.exited() {
				_ = c.cmd.Process.Signal(syscall.SIGKILL)
				<-c.done
			}
		}
	}()
	nextID := 0
	spawn := func(c *child) error {
		cmd := exec.Command(os.Args[0], "-child", "-role", c.role, "-id", strconv.Itoa(nextID), "-dir", cfg.dir,
			"-handler-delay", cfg.handlerDelay.String(), "-transport", cfg.transport, "-nats", cfg.natsURL, "-pg", cfg.pgDSN, "-mysql", cfg.mysqlDSN, "-kafka-ns", cfg.kafkaNS, "-rabbitmq-prefix", cfg.rabbitPrefix, "-rocketmq-ns", cfg.rocketNS)
		if c.lang != "" && c.lang != "go" {
			var err error
			if cmd, err = memberCommand(cfg, c.lang, nextID); err != nil {
				return err
			}
		}
		nextID++
		if c.lang == "" || c.lang == "go" {
			cmd.Stdout = tries.writer() // retry attempts (attempts.go)
		}
		if c.ns != nil {
			wrapped := c.ns.command(append([]string{cmd.Path}, cmd.Args[1:]...)...)
			wrapped.Env, wrapped.Stdout = cmd.Env, cmd.Stdout
			cmd = wrapped
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		c.cmd, c.done = cmd, make(chan struct{})
		go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(c.done)
		return nil
	}
	for _, c := range kids {
		if err := spawn(c); err != nil {
			return false, err
		}
	}
	kills, stops, producerDone, turn, consumerTurn, faultTurn := map[string]int{}, 0, false, 0, 0, map[string]int{}
	total, dbRestarted, dbDown := len(p.deliveries), false, time.Duration(0)
	procFaults := faults.processFaults()
	lastProgress := time.Now()
	nextFault := time.Now().Add(cfg.killMin + time.Duration(rng.Int64N(int64(cfg.killMax-cfg.killMin)+1)))
	for {
		// A child that ended without being told to is a failure, but
		// for the producer at the end of its plan.
		for slot, c := range kids {
			if !c.exited() || (c.role == "producer" && producerDone) {
				continue
			}
			if c.role == "producer" && c.cmd.ProcessState.Success() {
				producerDone = true
				continue
			}
			return false, fmt.Errorf("%s process in slot %d ended with %v: a child exited on its own", c.role, slot, c.cmd.ProcessState)
		}
		n, err := q.pending(ctx)
		if err != nil {
			return false, err
		}
		if pdb != nil && n >= 0 {
			unsent, err := outboxPending(ctx, pdb, len(p.deliveries))
			if err != nil {
				return false, err
			}
			n += unsent
		}
		if pace != nil && n >= 0 {
			if err := pace.failed(); err != nil {
				return false, err
			}
			n += pace.unpublished()
		}
		if n == 0 {
			break
		}
		if time.Since(lastProgress) >= 30*time.Second && n > 0 {
			lastProgress = time.Now()
			fmt.Printf("chaos: %v: %d of %d deliveries to go; faults so far: %d kills, %d pauses, %d partitions\n",
				time.Since(start).Round(time.Second), n, total, flog.count(faultKill), flog.count(faultPause), flog.count(faultPartition))
		}
		if r, ok := q.(restarter); ok && faults[faultBrokerKill] {
			before, t0 := restarts(q), time.Now()
			if err := r.maybeRestart(n, total); err != nil {
				return false, err
			}
			if restarts(q) > before {
				flog.add(faultBrokerKill, t0, time.Now().Add(brokerRecovery))
			}
		}
		if faults[faultDBRestart] && !dbRestarted && n >= 0 && n <= total*6/10 {
			t0 := time.Now()
			if dbDown, err = restartDB(cfg.business); err != nil {
				return false, err
			}
			dbRestarted = true
			flog.add(faultDBRestart, t0, time.Now().Add(recovery))
			fmt.Printf("chaos: %s crashed with %d of %d deliveries pending and started again in %v\n", cfg.business, n, total,
				dbDown.Round(time.Millisecond))
		}
		if time.Since(start) > cfg.timeout {
			return false, fmt.Errorf("timed out with %d deliveries pending", n)
		}
		if time.Now().Before(nextFault) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		nextFault = time.Now().Add(cfg.killMin + time.Duration(rng.Int64N(int64(cfg.killMax-cfg.killMin)+1)))
		// The victims take turns by role (producer, relay, consumer), so
		// a run with -outbox kills its producer and relay too.
		role := []string{"producer", "relay", "consumer"}[turn%3]
		turn++
		if !cfg.outbox || (role == "producer" && producerDone) {
			role = "consumer"
		}
		var slots []int
		for i, c := range kids {
			if c.role == role {
				slots = append(slots, i)
			}
		}
		slot := slots[rng.IntN(len(slots))]
		if role == "consumer" && len(langs) > 1 {
			// Mixed members: the consumer victims take turns, so that
			// every language is SIGKILLed in a run of a few kills.
			slot = slots[consumerTurn%len(slots)]
			consumerTurn++
		}
		c := kids[slot]
		if c.exited() || c.isFaulted() { // the producer at the end of its plan, a failure the next pass reports, or away
			continue
		}
		if len(procFaults) == 0 {
			continue
		}
		// The faults take turns, so a short run has each of them.
		// (each role's own turns: with -outbox the roles take turns too).
		fault := procFaults[faultTurn[c.role]%len(procFaults)]
		faultTurn[c.role]++
		switch fault {
		case faultPause:
			if err := flog.pause(c, faultFor(time.Duration(rng.Int64N(int64(2*time.Second))))); err != nil {
				return false, err
			}
			continue
		case faultPartition:
			if err := flog.partition(c, faultFor(time.Duration(rng.Int64N(int64(2*time.Second))))); err != nil {
				return false, err
			}
			continue
		}
		if c.role == "consumer" && rng.IntN(4) == 0 && (len(langs) == 1 || kills["consumer-"+c.lang] > 0) {
			// A graceful stop: the consumer finishes what it holds,
			// commits and leaves its group.
			if err := c.stopGracefully(slot); err != nil {
				return false, err
			}
			stops++
		} else {
			_ = c.cmd.Process.Signal(syscall.SIGKILL)
			<-c.done
			if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				if c.role == "producer" && c.cmd.ProcessState.Success() {
					producerDone = true // it finished just before the signal
					continue
				}
				return false, fmt.Errorf("%s process in slot %d ended with %v, not by the SIGKILL: a child exited on its own", c.role, slot, c.cmd.ProcessState)
			}
			kills[c.role]++
			if c.role == "consumer" {
				kills["consumer-"+c.lang]++
			}
		}
		flog.add(faultKill, time.Now(), time.Now().Add(recovery))
		if err := spawn(c); err != nil {
			return false, err
		}
	}
	flog.pending.Wait() // every pause and partition over
	for _, c := range kids {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range kids {
		<-c.done
	}
	elapsed := time.Since(start)

	// The verdict, from the databases alone.
	counts := map[string]int{}
	rows, err := db.QueryContext(ctx, `SELECT biz_key, count(*) FROM effects GROUP BY biz_key`)
	if err != nil {
		return false, err
	}
	for rows.Next() {
		var k string
		var c int
		if err := rows.Scan(&k, &c); err != nil {
			return false, err
		}
		counts[k] = c
	}
	rows.Close()
	effects, duplicates, lost, poisonEffects := 0, 0, 0, 0
	for k, c := range counts {
		effects++
		duplicates += c - 1
		if p.poison[k] {
			poisonEffects++
		}
	}
	for k := range p.good {
		if counts[k] == 0 {
			lost++
		}
	}
	// Each dead message must be listed once: repeats counts the listed
	// records beyond one per key (a forked retry chain makes them).
	var dead, deadRecords, wrongDead, repeats int
	recs, err := q.deadLetters(ctx)
	if err != nil {
		return false, err
	}
	deadKeys := map[string]bool{}
	for _, r := range recs {
		deadRecords++
		if deadKeys[r.BizKey] {
			repeats++
			continue
		}
		deadKeys[r.BizKey] = true
		dead++
		if !p.poison[r.BizKey] {
			wrongDead++
		}
	}
	fmt.Printf("chaos: %d consumer, %d producer and %d relay processes SIGKILLed, %d consumers stopped gracefully, each restarted, in %v (%.0f deliveries/s); %d dead-letter records listed\n",
		kills["consumer"], kills["producer"], kills["relay"], stops, elapsed.Round(time.Millisecond), float64(len(p.deliveries))/elapsed.Seconds(), deadRecords)
	fmt.Printf("chaos: faults: %d kills (incl. graceful stops), %d pauses, %d partitions, %d database restarts, %d broker restarts\n",
		flog.count(faultKill), flog.count(faultPause), flog.count(faultPartition), flog.count(faultDBRestart), flog.count(faultBrokerKill))
	rv := tries.check(benchmsg.Spec.Policy, flog)
	if cfg.retryLog != "" {
		if err := tries.dump(cfg.retryLog, flog); err != nil {
			return false, err
		}
	}
	// Paced runs (-rate, or -outbox's producer) keep the queue short, so
	// a retry's lateness is the runtime's; with every delivery published
	// at once it is the backlog's.
	paced := cfg.rate > 0 || cfg.outbox
	judged := "judged"
	if !paced {
		judged = "not judged: every delivery was published before the consumers started, so a retry waits behind the whole backlog; -rate or -outbox judges them"
	}
	fmt.Printf("chaos: retries: %d started (Go members), %d late while a fault was under way; the others started p50 %v, p99 %v after their not_before (%s)\n",
		rv.checked, rv.lateInFault, rv.p50, rv.p99, judged)
	if rv.firstProblem != "" {
		fmt.Printf("chaos: retry timing: %s\n", rv.firstProblem)
	}
	ok := duplicates == 0 && lost == 0 && effects == len(p.good) && dead == len(p.poison) && wrongDead == 0 &&
		poisonEffects == 0 && repeats == 0 && (!paced || rv.violations == 0)
	for _, f := range procFaults {
		if flog.count(f) == 0 {
			ok = false
			fmt.Printf("chaos: FAILED: no %s fault happened (a longer run, or shorter -kill-min/-kill-max)\n", f)
		}
	}
	if faults[faultDBRestart] && !dbRestarted {
		ok = false
		fmt.Println("chaos: FAILED: the database was never restarted")
	}
	if cfg.outbox && (kills["producer"] == 0 || kills["relay"] == 0) {
		ok = false
		fmt.Println("chaos: FAILED: -outbox, but the producer or the relay was never SIGKILLed (the plan was written before a kill came?)")
	}
	if len(langs) > 1 {
		// Each language must have done work, not only been killed: the
		// effects' notes name the member (child.go: p<id>; members:
		// <lang>-p<id>).
		byLang := map[string]int{}
		rows, err := db.QueryContext(ctx, `SELECT note, count(*) FROM effects GROUP BY note`)
		if err != nil {
			return false, err
		}
		for rows.Next() {
			var note string
			var n int
			if err := rows.Scan(&note, &n); err != nil {
				rows.Close()
				return false, err
			}
			lang, _, found := strings.Cut(note, "-")
			if !found {
				lang = "go"
			}
			byLang[lang] += n
		}
		rows.Close()
		var each []string
		for i, l := range langs {
			if slices.Index(langs, l) < i {
				continue // listed twice
			}
			each = append(each, fmt.Sprintf("%s=%d killed, %d effects", l, kills["consumer-"+l], byLang[l]))
			if kills["consumer-"+l] == 0 {
				ok = false
				fmt.Printf("chaos: FAILED: no %s member was SIGKILLed (a longer run, or shorter -kill-min/-kill-max)\n", l)
			}
			if byLang[l] == 0 {
				ok = false
				fmt.Printf("chaos: FAILED: no %s member wrote an effect (see its errors above)\n", l)
			}
		}
		fmt.Printf("chaos: members by language: %s\n", strings.Join(each, ", "))
	}
	if faults[faultBrokerKill] && restarts(q) == 0 {
		ok = false
		fmt.Println("chaos: FAILED: the broker was never restarted (the run ended before a tenth of it was done?)")
	}
	if !ok {
		fmt.Printf("chaos: FAILED: want effects=%d dead_lettered=%d; %d non-poison keys dead-lettered, %d poison keys with effects\n",
			len(p.good), len(p.poison), wrongDead, poisonEffects)
	}
	violations := strconv.Itoa(rv.violations)
	if !paced {
		violations = "n/a"
	}
	fmt.Printf("chaos: messages=%d transport=%s business=%s faults=%s effects=%d duplicates=%d lost=%d dead_lettered=%d dead_letter_repeats=%d retries=%d retry_delay_violations=%s\n",
		cfg.messages, cfg.transport, cfg.business, faults, effects, duplicates, lost, dead, repeats, rv.checked, violations)
	return ok, nil
}

// restarts is how often q's broker was restarted; -1 for a queue without
// a broker of its own to restart.
func restarts(q queue) int {
	switch q := q.(type) {
	case *kafkaQueue:
		return q.restarts
	case *rabbitQueue:
		return q.restarts
	case *rocketQueue:
		return q.restarts
	}
	return -1
}

// child is one process the parent runs: a consumer, the producer or the
// relay; done closes when it has exited.
type child struct {
	role    string
	lang    string // a consumer's: go, spring or python
	cmd     *exec.Cmd
	done    chan struct{}
	ns      *netns      // with the partition fault: the slot's network namespace
	faulted atomic.Bool // paused or cut off (faults.go)
}

func (c *child) setFaulted(v bool) { c.faulted.Store(v) }
func (c *child) isFaulted() bool   { return c.faulted.Load() }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stopGracefully sends the child SIGTERM and waits for it to exit 0; one
// that has not exited within a minute is killed, and that is an error.
func (c *child) stopGracefully(slot int) error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		if !c.cmd.ProcessState.Success() {
			return fmt.Errorf("%s process in slot %d, stopped with SIGTERM, exited with %v", c.role, slot, c.cmd.ProcessState)
		}
		return nil
	case <-time.After(time.Minute):
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.done
		return fmt.Errorf("%s process in slot %d did not stop within a minute of SIGTERM", c.role, slot)
	}
}
