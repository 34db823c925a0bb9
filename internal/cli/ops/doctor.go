package ops

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/internal/doctor"
)

// The variables --from-env reads, the ones the repo's scripts and tests
// already use.
const (
	envPostgres = "MSGCONTRACT_PG_DSN"
	envMySQL    = "MSGCONTRACT_MYSQL_DSN"
	envKafka    = "MSGCONTRACT_KAFKA_BROKERS"
)

func newDoctorCmd() *cobra.Command {
	var (
		cfg                         doctor.Config
		kafka, natsURL, natsMonitor string
		kafkaTopics, natsStreams    []string
		rabbitMgmt, rabbitVHost     string
		rabbitQueues                []string
		fromEnv, asJSON             bool
		timeout                     time.Duration
	)
	cmd := &cobra.Command{
		Use:   "doctor [targets] [--json]",
		Short: cli.DoctorShort,
		Long: `doctor reads a deployment's broker and database settings and reports every
one that weakens what the runtime relies on, with its fix.

The runtime acknowledges a message to its broker only after the handler's
effect and its dedup claim committed in the business database; a producer
(or the outbox relay) counts a message sent once the broker acknowledged
it. So a broker that forgets an acknowledged write, or a database that
forgets an acknowledged commit, loses a message for good: no retry and no
dedup brings it back. doctor checks:

  PostgreSQL     fsync, full_page_writes, synchronous_commit
  MySQL/MariaDB  innodb_flush_log_at_trx_commit, innodb_doublewrite,
                 sync_binlog (with binary logging on), isolation level
  SQLite         journal_mode (WAL), synchronous (FULL)
  Kafka          replication factor, min.insync.replicas and
                 unclean.leader.election.enable of each topic (admin API);
                 a producer's acks and enable.idempotence (its properties file)
  NATS           JetStream sync_interval (the monitoring port's /varz),
                 each stream's replicas and storage
  RabbitMQ       classic queues (the management API); publisher confirms
                 (a Spring properties file)

Each finding is one line on stdout: system, target, setting=value, what
it should be, the risk and the fix. Targets that could not be checked
(unreachable, refused, a setting that cannot be read) go to stderr.

Exit codes: 0 every target checked and nothing found; 1 findings, every
target checked; 2 a target could not be checked, or bad flags (the
findings made are still printed): never read 2 as clean.

With --from-env, ` + envPostgres + `, ` + envMySQL + ` and ` + envKafka + `
name targets too, for the systems no flag names. See docs/doctor.md.`,
		Example: `  msgcontract doctor --postgres postgres://app@db:5432/shop
  msgcontract doctor --mysql mysql://app:secret@db:3306/shop --sqlite 'file:payments.db?_journal_mode=WAL&_synchronous=FULL'
  msgcontract doctor --kafka kafka-1:9092,kafka-2:9092 --kafka-topic order-event --kafka-client-config producer.properties
  msgcontract doctor --nats nats://nats-1:4222 --nats-monitor http://nats-1:8222
  msgcontract doctor --rabbitmq-management http://monitor:secret@rabbit-1:15672 --rabbitmq-client-config application.properties
  msgcontract doctor --from-env --json
  msgcontract doctor --postgres "$DSN" || echo "exit $?: 1 findings, 2 could not check"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fromEnv {
				if v := os.Getenv(envPostgres); v != "" && len(cfg.Postgres) == 0 {
					cfg.Postgres = []string{v}
				}
				if v := os.Getenv(envMySQL); v != "" && len(cfg.MySQL) == 0 {
					cfg.MySQL = []string{v}
				}
				if v := os.Getenv(envKafka); v != "" && kafka == "" {
					kafka = v
				}
			}
			if kafka != "" {
				brokers := strings.Split(kafka, ",")
				for i := range brokers {
					brokers[i] = strings.TrimSpace(brokers[i])
				}
				cfg.Kafka = &doctor.KafkaConfig{Brokers: brokers, Topics: kafkaTopics}
			} else if len(kafkaTopics) > 0 {
				return cli.UsageErr(fmt.Errorf("--kafka-topic needs --kafka BROKERS"))
			}
			if natsURL != "" || natsMonitor != "" || len(natsStreams) > 0 {
				cfg.NATS = &doctor.NATSConfig{URL: natsURL, MonitorURL: natsMonitor, Streams: natsStreams}
			}
			if rabbitMgmt != "" {
				cfg.RabbitMQ = &doctor.RabbitMQConfig{ManagementURL: rabbitMgmt, VHost: rabbitVHost, Queues: rabbitQueues}
			} else if rabbitVHost != "" || len(rabbitQueues) > 0 {
				return cli.UsageErr(fmt.Errorf("--rabbitmq-vhost and --rabbitmq-queue need --rabbitmq-management URL"))
			}
			cfg.Timeout = timeout
			if err := cfg.Validate(); err != nil {
				return cli.UsageErr(fmt.Errorf("%w; see msgcontract doctor --help", err))
			}
			rep, err := doctor.Run(cmd.Context(), cfg)
			if err != nil {
				return cli.UsageErr(err)
			}
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else {
				writeReport(cmd.OutOrStdout(), rep)
			}
			for _, u := range rep.Unchecked {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", cmd.CommandPath(), u)
			}
			switch {
			case len(rep.Unchecked) > 0:
				return cli.CannotCheck()
			case len(rep.Findings) > 0:
				return cli.Findings()
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&cfg.Postgres, "postgres", nil, "a PostgreSQL DSN, postgres://user[:password]@host:port/db (repeatable)")
	f.StringArrayVar(&cfg.MySQL, "mysql", nil, "a MySQL or MariaDB DSN, mysql://user:password@host:port/db (repeatable)")
	f.StringArrayVar(&cfg.SQLite, "sqlite", nil, "a SQLite file: a path (opened as runtime-go's sqlitedb.Open does), sqlite:PATH or file:PATH?_synchronous=... as the application opens it (repeatable)")
	f.StringVar(&kafka, "kafka", "", "Kafka seed brokers, host:port[,host:port...]: topic settings through the admin API")
	f.StringArrayVar(&kafkaTopics, "kafka-topic", nil, "with --kafka: a topic to check (repeatable; default every non-internal topic)")
	f.StringArrayVar(&cfg.KafkaClient, "kafka-client-config", nil, "a Kafka producer's properties file (acks, enable.idempotence; Spring's spring.kafka.producer.* too) (repeatable)")
	f.StringVar(&natsURL, "nats", "", "a NATS URL, nats://host:4222: each JetStream stream's replicas and storage")
	f.StringVar(&natsMonitor, "nats-monitor", "", "a NATS server's monitoring URL, http://host:8222: its JetStream sync_interval")
	f.StringArrayVar(&natsStreams, "nats-stream", nil, "with --nats: a stream to check (repeatable; default every stream)")
	f.StringVar(&rabbitMgmt, "rabbitmq-management", "", "RabbitMQ's management API, http://user:password@host:15672: queue types")
	f.StringVar(&rabbitVHost, "rabbitmq-vhost", "", "with --rabbitmq-management: only this virtual host (default every one)")
	f.StringArrayVar(&rabbitQueues, "rabbitmq-queue", nil, "with --rabbitmq-management: a queue to check (repeatable; default every queue)")
	f.StringArrayVar(&cfg.RabbitMQClient, "rabbitmq-client-config", nil, "a RabbitMQ publisher's Spring properties file (spring.rabbitmq.publisher-confirm-type) (repeatable)")
	f.BoolVar(&fromEnv, "from-env", false, "also check what "+envPostgres+", "+envMySQL+" and "+envKafka+" name, for systems no flag names")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON (findings, unchecked, checked)")
	f.DurationVar(&timeout, "timeout", doctor.DefaultTimeout, "how long each target may take")
	return cmd
}

func writeReport(out io.Writer, rep *doctor.Report) {
	for _, f := range rep.Findings {
		fmt.Fprintln(out, f)
	}
	n := len(rep.Findings)
	fmt.Fprintf(out, "%d finding%s", n, cli.Plural(n))
	if len(rep.Checked) > 0 {
		fmt.Fprintf(out, "; checked: %s", strings.Join(rep.Checked, ", "))
	}
	if len(rep.Unchecked) > 0 {
		fmt.Fprintf(out, "; %d target%s not checked (see stderr)", len(rep.Unchecked), cli.Plural(len(rep.Unchecked)))
	}
	fmt.Fprintln(out)
}
