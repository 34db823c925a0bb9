package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The faults (-faults, make chaos FAULTS=):
//
//   - kill: a process SIGKILLed (three times in four; else stopped with
//     SIGTERM) and started again;
//   - pause: a process SIGSTOPped for longer than its lease and its
//     broker session, then SIGCONTed: it wakes up believing it still holds
//     what it fetched, while another has taken it over;
//   - partition: a process cut off from the broker and the database (its
//     network namespace's loopback down; netns.go), then healed;
//   - db-restart: the business database (PostgreSQL or MariaDB) crashed
//     and started again, once, when 40% of the deliveries are done;
//   - broker-kill: the broker (Kafka or RabbitMQ) SIGKILLed and started
//     again, once, when 10% are done.
//
// kill, pause and partition take turns at random, one every -kill-min to
// -kill-max, each on a process that is not already under a fault.
const (
	faultKill       = "kill"
	faultPause      = "pause"
	faultPartition  = "partition"
	faultDBRestart  = "db-restart"
	faultBrokerKill = "broker-kill"
)

var allFaults = []string{faultKill, faultPause, faultPartition, faultDBRestart, faultBrokerKill}

// faultSet is the faults of a run.
type faultSet map[string]bool

// parseFaults checks -faults against the run's transport and database;
// empty means kill, plus broker-kill where there is a broker to kill.
func parseFaults(cfg config) (faultSet, error) {
	spec := cfg.faults
	if spec == "" {
		spec = faultKill
		if cfg.transport == "kafka" || cfg.transport == "rabbitmq" || cfg.transport == "rocketmq" {
			spec += "," + faultBrokerKill
		}
	}
	fs := faultSet{}
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(allFaults, f) {
			return nil, fmt.Errorf("-faults %q: %q is not one of %s", spec, f, strings.Join(allFaults, ", "))
		}
		fs[f] = true
	}
	network := cfg.transport == "nats" || cfg.transport == "kafka" || cfg.transport == "rabbitmq" || cfg.transport == "rocketmq" ||
		cfg.business == "postgres" || cfg.business == "mysql"
	switch {
	case fs[faultBrokerKill] && cfg.transport != "kafka" && cfg.transport != "rabbitmq" && cfg.transport != "rocketmq":
		return nil, fmt.Errorf("-faults %s: broker-kill needs -transport kafka, rabbitmq or rocketmq (the SQLite queue has no broker; the NATS server runs inside this process)", spec)
	case fs[faultDBRestart] && cfg.business != "postgres" && cfg.business != "mysql":
		return nil, fmt.Errorf("-faults %s: db-restart needs -business postgres or mysql (a SQLite file has no server to restart)", spec)
	case fs[faultPartition] && !network:
		return nil, fmt.Errorf("-faults %s: partition needs a network between the consumers and the broker or the database: -transport nats, kafka or rabbitmq, or -business postgres or mysql", spec)
	case fs[faultPartition] && os.Geteuid() != 0:
		return nil, fmt.Errorf("-faults %s: partition needs root (it makes a network namespace per process with ip netns)", spec)
	case !fs[faultKill] && !fs[faultPause] && !fs[faultPartition] && !fs[faultBrokerKill] && !fs[faultDBRestart]:
		return nil, fmt.Errorf("-faults %q: name at least one fault", spec)
	}
	return fs, nil
}

// processFaults are the faults that take turns on processes.
func (fs faultSet) processFaults() []string {
	var out []string
	for _, f := range []string{faultKill, faultPause, faultPartition} {
		if fs[f] {
			out = append(out, f)
		}
	}
	return out
}

func (fs faultSet) String() string {
	var out []string
	for _, f := range allFaults {
		if fs[f] {
			out = append(out, f)
		}
	}
	return strings.Join(out, ",")
}

// window is a span of time in which a fault (or the recovery from it)
// may hold messages back: a retry late inside one is explained by it.
type window struct{ from, to time.Time }

// faultLog records the run's faults: counts and windows.
type faultLog struct {
	mu      sync.Mutex
	counts  map[string]int
	windows []window
	pending sync.WaitGroup // pauses and partitions not yet over
}

func newFaultLog() *faultLog { return &faultLog{counts: map[string]int{}} }

func (l *faultLog) add(kind string, from, to time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[kind]++
	l.windows = append(l.windows, window{from, to})
}

func (l *faultLog) count(kind string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[kind]
}

// covers reports whether [from, to] overlaps a fault's window.
func (l *faultLog) covers(from, to time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.windows {
		if !from.After(w.to) && !to.Before(w.from) {
			return true
		}
	}
	return false
}

// recovery is how long after a process fault ends its effects may last:
// a lease or a broker session to run out, a group to rebalance, the
// process to start and fetch again. A broker's restart takes longer to
// settle (brokerRecovery): partitions' leaders come back, clients
// reconnect.
const (
	recovery       = max(lease, kafkaSession) + 2*time.Second
	brokerRecovery = 10 * time.Second
)

// faultFor is how long a pause or a partition lasts: longer than the
// lease and the broker session, so that another process takes the
// victim's work over while it is away.
func faultFor(extra time.Duration) time.Duration {
	return max(lease, kafkaSession) + time.Second + extra
}

// pause SIGSTOPs c for d, then SIGCONTs it, in the background; c is
// under a fault until then.
func (l *faultLog) pause(c *child, d time.Duration) error {
	if err := c.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		return fmt.Errorf("SIGSTOP %s: %w", c.role, err)
	}
	start := time.Now()
	c.setFaulted(true)
	l.pending.Add(1)
	time.AfterFunc(d, func() {
		defer l.pending.Done()
		_ = c.cmd.Process.Signal(syscall.SIGCONT)
		c.setFaulted(false)
		l.add(faultPause, start, time.Now().Add(recovery))
	})
	return nil
}

// partition cuts c's namespace off for d, then heals it, in the
// background; c is under a fault until then.
func (l *faultLog) partition(c *child, d time.Duration) error {
	if err := c.ns.cut(); err != nil {
		return err
	}
	start := time.Now()
	c.setFaulted(true)
	l.pending.Add(1)
	time.AfterFunc(d, func() {
		defer l.pending.Done()
		if err := c.ns.heal(); err != nil {
			fmt.Fprintf(os.Stderr, "chaos: heal the partition of %s: %v\n", c.role, err)
		}
		c.setFaulted(false)
		l.add(faultPartition, start, time.Now().Add(recovery))
	})
	return nil
}

// restartDB crashes the business database and starts it again after a
// moment, through the start.sh and kill.sh scripts/pg-start.sh and
// scripts/mariadb-start.sh leave in the server's dir.
func restartDB(business string) (time.Duration, error) {
	env := map[string]string{"postgres": "MSGCONTRACT_PG_DIR", "mysql": "MSGCONTRACT_MYSQL_DIR"}[business]
	dir := os.Getenv(env)
	if dir == "" {
		return 0, fmt.Errorf("-faults db-restart needs %s: run it under scripts/with-postgres.sh or scripts/with-mariadb.sh (make chaos does)", env)
	}
	start := time.Now()
	for _, script := range []string{"kill.sh", "start.sh"} {
		cmd := exec.Command("bash", dir+"/"+script)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return 0, fmt.Errorf("restart the %s server: %s: %w", business, script, err)
		}
		if script == "kill.sh" {
			time.Sleep(time.Second) // down for a moment, under load
		}
	}
	return time.Since(start), nil
}
