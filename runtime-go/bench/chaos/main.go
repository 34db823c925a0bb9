// Command chaos runs the effectively-once runtime under faults and checks
// the result from the database alone.
//
// It publishes -messages unique messages to the embedded SQLite queue, plus
// 10% duplicate deliveries; 4.5% of the messages fail transiently (a
// retryable code on their first one or two attempts), 1% are poison (half
// with a non-retryable code, half with a payload that does not decode) and
// 1% fail with a retryable code until their retries are spent. Several
// consumer processes (this binary re-executed with -child) share the queue
// while a killer stops one of them at random intervals, by SIGKILL three
// times in four, else by SIGTERM (a graceful stop), and starts a
// replacement. When the queue is empty it prints
//
//	chaos: messages=N effects=E duplicates=0 lost=0 dead_lettered=K dead_letter_repeats=0
//
// where E counts distinct keys with an effect (it must equal the number of
// messages that can succeed), duplicates counts effects beyond one per
// key, lost counts such keys without an effect, K counts dead-lettered keys
// (it must equal the number of poison and exhausted messages) and
// dead_letter_repeats counts dead letters listed beyond one per key (a
// forked retry chain). It exits 1 when any of these is off.
//
// -members go,spring,python shares the consumer group among Go members and
// members in Java (a Spring Boot service on msgcontract's starter) and
// Python, each SIGKILLed in turn (make chaos-mixed; Kafka and PostgreSQL).
//
// -outbox sends the deliveries the way a producer service does: a
// producer process writes them into its transactional outbox and a relay
// process publishes it, and the killer SIGKILLs those two as well.
//
// -transport sqlite-shared keeps the embedded queue in the business file,
// where the default-mode consumers read their fetches inside the business
// transaction; -transport nats runs the same over NATS JetStream;
// -transport kafka over
// the Apache Kafka broker scripts/with-kafka.sh started, which it SIGKILLs
// and restarts once in the middle (make chaos TRANSPORT=kafka); -transport
// rabbitmq over the RabbitMQ node scripts/with-rabbitmq.sh started, likewise
// SIGKILLed and restarted once (make chaos TRANSPORT=rabbitmq); -transport
// rocketmq over the RocketMQ of scripts/with-rocketmq.sh, its broker
// likewise (make chaos TRANSPORT=rocketmq); -business postgres
// keeps effects and claims in PostgreSQL ($MSGCONTRACT_PG_DSN), -business mysql
// in MySQL/MariaDB ($MSGCONTRACT_MYSQL_DSN, e.g. under scripts/with-mariadb.sh).
//
//	go run ./bench/chaos -messages 20000
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	var cfg config
	flag.IntVar(&cfg.messages, "messages", 20000, "unique messages")
	flag.IntVar(&cfg.procs, "procs", 3, "consumer processes running at once")
	flag.DurationVar(&cfg.killMin, "kill-min", 100*time.Millisecond, "shortest pause between kills")
	flag.DurationVar(&cfg.killMax, "kill-max", 700*time.Millisecond, "longest pause between kills")
	flag.DurationVar(&cfg.handlerDelay, "handler-delay", 200*time.Microsecond, "time each handler run takes, so kills land mid-work")
	flag.DurationVar(&cfg.timeout, "timeout", 15*time.Minute, "give up after this long")
	flag.Int64Var(&cfg.seed, "seed", time.Now().UnixNano(), "random seed")
	flag.StringVar(&cfg.dir, "dir", "", "working directory (default: a fresh temp dir, removed afterwards)")
	flag.StringVar(&cfg.transport, "transport", "sqlite", "sqlite (the embedded queue), sqlite-shared (the embedded queue in the business file, read in the business transaction), nats (an in-process JetStream server) kafka (the broker of scripts/with-kafka.sh, restarted once mid-run), rabbitmq (the node of scripts/with-rabbitmq.sh, restarted once mid-run) or rocketmq (the broker of scripts/with-rocketmq.sh, restarted once mid-run)")
	flag.StringVar(&cfg.business, "business", "sqlite", "business database: sqlite, postgres at $MSGCONTRACT_PG_DSN, or mysql at $MSGCONTRACT_MYSQL_DSN")
	flag.StringVar(&cfg.natsURL, "nats", "", "NATS URL (internal)")
	flag.StringVar(&cfg.kafkaNS, "kafka-ns", "", "Kafka namespace (internal)")
	flag.StringVar(&cfg.rabbitPrefix, "rabbitmq-prefix", "", "RabbitMQ name prefix (internal)")
	flag.StringVar(&cfg.rocketNS, "rocketmq-ns", "", "RocketMQ namespace (internal)")
	flag.StringVar(&cfg.pgDSN, "pg", "", "PostgreSQL DSN (internal)")
	flag.StringVar(&cfg.mysqlDSN, "mysql", "", "MySQL DSN (internal)")
	flag.StringVar(&cfg.members, "members", "go", "the consumer slots' languages, taking turns: go, or a list such as go,spring,python (members in other languages run with -transport kafka -business postgres; see members.go)")
	flag.BoolVar(&cfg.outbox, "outbox", false, "publish through a producer process writing its outbox and a relay process, both SIGKILLed at random too")
	flag.StringVar(&cfg.faults, "faults", "", "the faults, comma-separated: kill, pause, partition, db-restart, broker-kill (default kill, and broker-kill on kafka or rabbitmq; see faults.go)")
	flag.IntVar(&cfg.rate, "rate", 0, "publish the deliveries at this many a second, as a producer would, instead of all before the consumers start (0); retries are then due while the queue is short, and their timing is checked")
	flag.StringVar(&cfg.retryLog, "retry-log", "", "write each retry's timing and the faults' windows to this CSV file")
	flag.StringVar(&cfg.role, "role", "consumer", "with -child: consumer, producer or relay (internal)")
	child := flag.Bool("child", false, "run as a child process (internal)")
	id := flag.Int("id", 0, "consumer process id (internal)")
	flag.Parse()

	if *child {
		run := map[string]func() error{
			"consumer": func() error { return runChild(cfg, *id) },
			"producer": func() error { return runProducer(cfg) },
			"relay":    func() error { return runRelay(cfg) },
		}[cfg.role]
		if run == nil {
			fmt.Fprintf(os.Stderr, "chaos child: -role %q: want consumer, producer or relay\n", cfg.role)
			os.Exit(2)
		}
		if err := run(); err != nil {
			fmt.Fprintf(os.Stderr, "chaos %s: %v\n", cfg.role, err)
			os.Exit(2)
		}
		return
	}
	ok, err := runParent(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

type config struct {
	messages, procs       int
	killMin, killMax      time.Duration
	handlerDelay, timeout time.Duration
	seed                  int64
	dir                   string
	transport, business   string
	natsURL, pgDSN        string
	mysqlDSN              string
	kafkaNS               string
	rabbitPrefix          string
	rocketNS              string
	members               string
	outbox                bool
	role                  string
	faults                string
	rate                  int
	retryLog              string
}
