package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
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
	maybeRestart(pending int) error
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
	switch cfg.business {
	case "sqlite":
	case "postgres":
		dsn := os.Getenv("MSGCONTRACT_PG_DSN")
		if dsn == "" {
			return false, fmt.Errorf("-business postgres needs MSGCONTRACT_PG_DSN (export MSGCONTRACT_PG_DSN=$(bash scripts/pg-start.sh))")
		}
		if cfg.pgDSN, err = freshPostgres(dsn); err != nil {
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
	default:
		return false, fmt.Errorf("-transport %q: want sqlite, sqlite-shared, nats or kafka", cfg.transport)
	}
	defer q.close()
	for i := 0; i < len(p.deliveries); i += 1000 {
		if err := q.publish(ctx, p.deliveries[i:min(i+1000, len(p.deliveries))]); err != nil {
			return false, err
		}
	}
	fmt.Printf("chaos: seed=%d published %d deliveries (%d messages, %d duplicates, %d poison); %d consumer processes; transport %s, business database %s\n",
		cfg.seed, len(p.deliveries), cfg.messages, p.dups, len(p.poison), cfg.procs, cfg.transport, cfg.business)

	start := time.Now()
	procs := make([]*exec.Cmd, cfg.procs)
	nextID := 0
	spawn := func(slot int) error {
		cmd := exec.Command(os.Args[0], "-child", "-id", strconv.Itoa(nextID), "-dir", cfg.dir,
			"-handler-delay", cfg.handlerDelay.String(), "-transport", cfg.transport, "-nats", cfg.natsURL, "-pg", cfg.pgDSN, "-mysql", cfg.mysqlDSN, "-kafka-ns", cfg.kafkaNS)
		nextID++
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		procs[slot] = cmd
		return nil
	}
	for i := range procs {
		if err := spawn(i); err != nil {
			return false, err
		}
	}
	kills, stops := 0, 0
	for {
		n, err := q.pending(ctx)
		if err != nil {
			return false, err
		}
		if n == 0 {
			break
		}
		if r, ok := q.(restarter); ok {
			if err := r.maybeRestart(n); err != nil {
				return false, err
			}
		}
		if time.Since(start) > cfg.timeout {
			return false, fmt.Errorf("timed out with %d deliveries pending", n)
		}
		pause := cfg.killMin + time.Duration(rng.Int64N(int64(cfg.killMax-cfg.killMin)+1))
		time.Sleep(pause)
		slot := rng.IntN(len(procs))
		if rng.IntN(4) == 0 {
			// A graceful stop: the consumer finishes what it holds,
			// commits and leaves its group.
			if err := stopGracefully(procs[slot], slot); err != nil {
				return false, err
			}
			stops++
		} else {
			_ = procs[slot].Process.Signal(syscall.SIGKILL)
			_ = procs[slot].Wait()
			if ws, ok := procs[slot].ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				return false, fmt.Errorf("consumer process in slot %d ended with %v, not by the SIGKILL: a child exited on its own", slot, procs[slot].ProcessState)
			}
			kills++
		}
		if err := spawn(slot); err != nil {
			return false, err
		}
	}
	for _, cmd := range procs {
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, cmd := range procs {
		_ = cmd.Wait()
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
	fmt.Printf("chaos: %d processes SIGKILLed, %d stopped gracefully, each restarted, in %v (%.0f deliveries/s); %d dead-letter records listed\n",
		kills, stops, elapsed.Round(time.Millisecond), float64(len(p.deliveries))/elapsed.Seconds(), deadRecords)
	ok := duplicates == 0 && lost == 0 && effects == len(p.good) && dead == len(p.poison) && wrongDead == 0 &&
		poisonEffects == 0 && repeats == 0
	if kq, isKafka := q.(*kafkaQueue); isKafka && kq.restarts == 0 {
		ok = false
		fmt.Println("chaos: FAILED: the broker was never restarted (the run ended before a tenth of it was done?)")
	}
	if !ok {
		fmt.Printf("chaos: FAILED: want effects=%d dead_lettered=%d; %d non-poison keys dead-lettered, %d poison keys with effects\n",
			len(p.good), len(p.poison), wrongDead, poisonEffects)
	}
	fmt.Printf("chaos: messages=%d effects=%d duplicates=%d lost=%d dead_lettered=%d dead_letter_repeats=%d\n",
		cfg.messages, effects, duplicates, lost, dead, repeats)
	return ok, nil
}

// stopGracefully sends cmd SIGTERM and waits for it to exit 0; one that
// has not exited within a minute is killed, and that is an error.
func stopGracefully(cmd *exec.Cmd, slot int) error {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("consumer process in slot %d, stopped with SIGTERM, exited with %v", slot, err)
		}
		return nil
	case <-time.After(time.Minute):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return fmt.Errorf("consumer process in slot %d did not stop within a minute of SIGTERM", slot)
	}
}
