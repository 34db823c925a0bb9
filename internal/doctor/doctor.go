// Package doctor reads a deployment's broker and database settings and
// reports every one that weakens what the msgcontract runtime relies on:
// a message is acknowledged to its broker only after its handler's effect
// and its dedup claim committed in the business database, so a broker
// that forgets an acknowledged write, or a database that forgets a
// commit, loses a message for good (docs/doctor.md).
//
// Each system has its own file and check function; Run runs the checks
// a Config names, each bounded by Config.Timeout, and gathers their
// findings and the targets it could not check.
package doctor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Finding is one setting that weakens delivery or durability.
type Finding struct {
	System  string `json:"system"`  // postgres, mysql, mariadb, sqlite, kafka, kafka-client, nats, rabbitmq, rabbitmq-client
	Target  string `json:"target"`  // host:port, file, topic or stream it was found on
	Setting string `json:"setting"` // the setting's name as the system spells it
	Value   string `json:"value"`   // the value found
	Want    string `json:"want"`    // the value(s) the runtime needs
	Risk    string `json:"risk"`    // what can go wrong
	Fix     string `json:"fix"`     // the config line or command that fixes it
}

// String is the finding's one-line form: system, target, setting, value,
// what it should be, the risk and the fix.
func (f Finding) String() string {
	return fmt.Sprintf("%s %s: %s=%s (want %s): %s; fix: %s", f.System, f.Target, f.Setting, f.Value, f.Want, f.Risk, f.Fix)
}

// Unchecked is a target that could not be checked, in whole or in part: a
// script must never take it for a clean result.
type Unchecked struct {
	System string `json:"system"`
	Target string `json:"target"`
	Error  string `json:"error"`
}

func (u Unchecked) String() string {
	return fmt.Sprintf("%s %s: cannot check: %s", u.System, u.Target, u.Error)
}

// Report is the outcome of Run.
type Report struct {
	Findings  []Finding   `json:"findings"`
	Unchecked []Unchecked `json:"unchecked"`
	Checked   []string    `json:"checked"` // "system target" of every target checked in full
}

// DefaultTimeout bounds each target's check.
const DefaultTimeout = 10 * time.Second

// Config names what Run checks; at least one target is needed.
type Config struct {
	Postgres []string // PostgreSQL DSNs (postgres:// URLs or key=value)
	MySQL    []string // MySQL/MariaDB DSNs (mysql:// URLs or the driver's form)
	SQLite   []string // SQLite files: a path, sqlite:PATH, sqlite://PATH or file:PATH?params

	Kafka       *KafkaConfig
	KafkaClient []string // Java-style properties files of Kafka producers

	NATS *NATSConfig

	RabbitMQ       *RabbitMQConfig
	RabbitMQClient []string // Java-style properties files of RabbitMQ publishers (Spring's)

	Timeout time.Duration // each target's; DefaultTimeout when zero
}

// Validate reports a Config that names nothing to check or names a
// target badly, saying which.
func (c *Config) Validate() error {
	if len(c.Postgres)+len(c.MySQL)+len(c.SQLite)+len(c.KafkaClient)+len(c.RabbitMQClient) == 0 &&
		c.Kafka == nil && c.NATS == nil && c.RabbitMQ == nil {
		return errors.New("nothing to check: name a database, a broker or a client config")
	}
	if c.Timeout < 0 {
		return fmt.Errorf("timeout %v: want a positive duration", c.Timeout)
	}
	if c.Kafka != nil {
		if err := c.Kafka.Validate(); err != nil {
			return err
		}
	}
	if c.NATS != nil {
		if err := c.NATS.Validate(); err != nil {
			return err
		}
	}
	if c.RabbitMQ != nil {
		if err := c.RabbitMQ.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// check is one target's check: the findings it made and the error that
// kept it from finishing (findings made before the error count).
type check struct {
	system, target string
	run            func(ctx context.Context) ([]Finding, error)
}

// Run checks every target of cfg, one after the other, and reports what it
// found and what it could not check. It returns an error only for an
// invalid cfg.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	var checks []check
	for _, dsn := range cfg.Postgres {
		checks = append(checks, check{"postgres", postgresTarget(dsn), func(ctx context.Context) ([]Finding, error) { return CheckPostgres(ctx, dsn) }})
	}
	for _, dsn := range cfg.MySQL {
		checks = append(checks, check{"mysql", mysqlTarget(dsn), func(ctx context.Context) ([]Finding, error) { return CheckMySQL(ctx, dsn) }})
	}
	for _, dsn := range cfg.SQLite {
		checks = append(checks, check{"sqlite", sqliteTarget(dsn), func(ctx context.Context) ([]Finding, error) { return CheckSQLite(ctx, dsn) }})
	}
	for _, path := range cfg.KafkaClient {
		checks = append(checks, check{"kafka-client", path, func(context.Context) ([]Finding, error) { return CheckKafkaClientFile(path) }})
	}
	if k := cfg.Kafka; k != nil {
		checks = append(checks, check{"kafka", strings.Join(k.Brokers, ","), func(ctx context.Context) ([]Finding, error) { return CheckKafka(ctx, *k) }})
	}
	if n := cfg.NATS; n != nil {
		checks = append(checks, check{"nats", n.target(), func(ctx context.Context) ([]Finding, error) { return CheckNATS(ctx, *n) }})
	}
	for _, path := range cfg.RabbitMQClient {
		checks = append(checks, check{"rabbitmq-client", path, func(context.Context) ([]Finding, error) { return CheckRabbitMQClientFile(path) }})
	}
	if r := cfg.RabbitMQ; r != nil {
		checks = append(checks, check{"rabbitmq", r.target(), func(ctx context.Context) ([]Finding, error) { return CheckRabbitMQ(ctx, *r) }})
	}
	rep := &Report{Findings: []Finding{}, Unchecked: []Unchecked{}, Checked: []string{}}
	for _, c := range checks {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		fs, err := c.run(cctx)
		cancel()
		rep.Findings = append(rep.Findings, fs...)
		if err != nil {
			rep.Unchecked = append(rep.Unchecked, Unchecked{System: c.system, Target: c.target, Error: oneLine(err)})
			continue
		}
		rep.Checked = append(rep.Checked, c.system+" "+c.target)
	}
	return rep, nil
}

// readProperties reads a Java-style properties file: key=value or
// key: value lines, # and ! comments. Later keys win; line continuations
// and escapes are not supported (client settings do not need them).
func readProperties(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseProperties(f)
}

func parseProperties(r io.Reader) (map[string]string, error) {
	props := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			props[line] = ""
			continue
		}
		props[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	return props, sc.Err()
}

// lookup returns the first of keys set in props.
func lookup(props map[string]string, keys ...string) (key, value string, ok bool) {
	for _, k := range keys {
		if v, ok := props[k]; ok {
			return k, v, true
		}
	}
	return "", "", false
}

// oneLine is err's message on one line: drivers (pgx) and errors.Join
// break theirs over several.
func oneLine(err error) string {
	var b strings.Builder
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(line)
	}
	return b.String()
}
