package ops

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/msgcontract/msgcontract/internal/cli"
	"github.com/msgcontract/msgcontract/internal/doctor"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
)

// runDoctor runs msgcontract doctor with --json and returns its exit
// code, its report and stderr.
func runDoctor(t *testing.T, args ...string) (int, doctor.Report, string) {
	t.Helper()
	code, out, errOut := run(t, append([]string{"doctor", "--json"}, args...)...)
	var rep doctor.Report
	if code != cli.ExitUsage || out != "" {
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("doctor %q: exit %d, not a JSON report: %v\n%s%s", args, code, err, out, errOut)
		}
	}
	return code, rep, errOut
}

// found lists a report's findings as "system target: setting=value".
func found(rep doctor.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.System+" "+f.Target+": "+f.Setting+"="+f.Value)
	}
	return out
}

// TestDoctorExitCodes: 0 only when every target was checked and nothing
// found, 1 for findings, 2 when anything could not be checked (the
// findings made still printed) or the flags are wrong.
func TestDoctorExitCodes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "business.db")
	sdb, err := sqlitedb.Open(db) // WAL, as the runtime opens it
	if err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	clean := "file:" + db + "?_journal_mode=WAL&_synchronous=FULL"
	weakProducer := filepath.Join(dir, "producer.properties")
	goodProducer := filepath.Join(dir, "good.properties")
	spring := filepath.Join(dir, "application.properties")
	for path, text := range map[string]string{weakProducer: "acks=1\n", goodProducer: "acks=all\nenable.idempotence=true\n",
		spring: "spring.rabbitmq.publisher-confirm-type=correlated\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	missing := filepath.Join(dir, "missing.db")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // in the text output
		stderr string
	}{
		{"clean", []string{"--sqlite", clean, "--kafka-client-config", goodProducer, "--rabbitmq-client-config", spring}, cli.ExitOK,
			"0 findings; checked: sqlite " + db + ", kafka-client " + goodProducer + ", rabbitmq-client " + spring + "\n", ""},
		{"findings", []string{"--sqlite", db, "--kafka-client-config", weakProducer}, cli.ExitFindings,
			"kafka-client " + weakProducer + ": acks=1 (want all (or -1)): ", ""},
		{"the finding's fix", []string{"--sqlite", db}, cli.ExitFindings,
			"sqlite " + db + ": synchronous=NORMAL (sqlitedb.Open's default; a bare path says nothing else) (want FULL): ", ""},
		{"a missing file is not clean", []string{"--sqlite", missing}, cli.ExitUsage,
			"0 findings; 1 target not checked", "msgcontract doctor: sqlite " + missing + ": cannot check: "},
		{"findings and an unreachable server", []string{"--kafka-client-config", weakProducer, "--postgres", "postgres://u@127.0.0.1:1/db", "--timeout", "2s"},
			cli.ExitUsage, "acks=1", "msgcontract doctor: postgres 127.0.0.1:1: cannot check: connect: "},
		{"unreachable MySQL", []string{"--mysql", "mysql://u:p@127.0.0.1:1/db", "--timeout", "2s"}, cli.ExitUsage, "",
			"msgcontract doctor: mysql 127.0.0.1:1: cannot check: connect: "},
		{"unreachable Kafka", []string{"--kafka", "127.0.0.1:1", "--timeout", "1s"}, cli.ExitUsage, "",
			"msgcontract doctor: kafka 127.0.0.1:1: cannot check: broker 127.0.0.1:1 unreachable"},
		{"unreachable NATS monitor", []string{"--nats-monitor", "http://127.0.0.1:1", "--timeout", "2s"}, cli.ExitUsage, "",
			"msgcontract doctor: nats http://127.0.0.1:1: cannot check: GET http://127.0.0.1:1/varz: "},
		{"unreachable RabbitMQ management", []string{"--rabbitmq-management", "http://guest:guest@127.0.0.1:1", "--timeout", "2s"}, cli.ExitUsage, "",
			"msgcontract doctor: rabbitmq 127.0.0.1:1: cannot check: GET http://127.0.0.1:1/api/queues: "},
		{"a missing client config", []string{"--kafka-client-config", filepath.Join(dir, "none")}, cli.ExitUsage, "", "no such file"},
		{"nothing named", nil, cli.ExitUsage, "", "msgcontract doctor: nothing to check: "},
		{"topic without brokers", []string{"--kafka-topic", "t"}, cli.ExitUsage, "", "--kafka-topic needs --kafka BROKERS"},
		{"an AMQP URL for the management API", []string{"--rabbitmq-management", "amqp://g:g@h:5672/"}, cli.ExitUsage, "", "want http://user:password@host:15672"},
		{"a bad flag", []string{"--sqlite", db, "--no-such-flag"}, cli.ExitUsage, "", "unknown flag: --no-such-flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := run(t, append([]string{"doctor"}, tt.args...)...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) || (tt.stderr == "") != (errOut == "") {
				t.Errorf("exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)", code, tt.code, out, tt.stdout, errOut, tt.stderr)
			}
		})
	}
	// --json: the same report, the same exit code.
	code, rep, _ := runDoctor(t, "--sqlite", db, "--kafka-client-config", weakProducer, "--postgres", "postgres://u@127.0.0.1:1/db", "--timeout", "2s")
	if code != cli.ExitUsage || len(rep.Findings) != 2 || len(rep.Unchecked) != 1 || rep.Unchecked[0].Target != "127.0.0.1:1" {
		t.Errorf("--json: exit %d, %+v", code, rep)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("doctor created %s: %v", missing, err)
	}
	// --help teaches: the checks, the exit codes, examples.
	code, out, _ := run(t, "doctor", "--help")
	for _, want := range []string{"synchronous_commit", "sync_interval", "Exit codes: 0 every target checked", "never read 2 as clean",
		"Examples:\n  msgcontract doctor --postgres ", "--kafka-client-config producer.properties", "docs/doctor.md"} {
		if code != cli.ExitOK || !strings.Contains(out, want) {
			t.Errorf("doctor --help: exit %d, no %q:\n%s", code, want, out)
		}
	}
}

// startNATS runs an embedded JetStream server named name (its ID when
// empty) with its monitoring port open; syncAlways sets jetstream {
// sync_interval: always }, else the default two minutes stays.
func startNATS(t *testing.T, name string, syncAlways bool) (*server.Server, string) {
	t.Helper()
	opts := &server.Options{ServerName: name, Host: "127.0.0.1", Port: server.RANDOM_PORT, HTTPHost: "127.0.0.1", HTTPPort: server.RANDOM_PORT,
		JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true, SyncAlways: syncAlways}
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		srv.Shutdown()
		t.Fatal("nats server: not ready in 30s")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv, fmt.Sprintf("http://%s", srv.MonitorAddr())
}

// TestDoctorNATS: the default sync interval and single-replica (and
// in-memory) streams are findings; sync_interval: always is clean; a
// stream that does not exist cannot be checked.
func TestDoctorNATS(t *testing.T) {
	t.Parallel()
	weak, weakMonitor := startNATS(t, "", false)
	named, namedMonitor := startNATS(t, "nats-1", false)
	_, strongMonitor := startNATS(t, "", true)
	nc, err := nats.Connect(weak.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, sc := range []jetstream.StreamConfig{{Name: "ORDERS", Subjects: []string{"orders.>"}},
		{Name: "CACHE", Subjects: []string{"cache.>"}, Storage: jetstream.MemoryStorage}} {
		if _, err := js.CreateStream(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"weak server and streams", []string{"--nats", weak.ClientURL(), "--nats-monitor", weakMonitor}, cli.ExitFindings, []string{
			"nats " + weakMonitor + ": jetstream.sync_interval=2m0s",
			"nats stream CACHE: storage=memory", "nats stream CACHE: replicas=1", "nats stream ORDERS: replicas=1"}},
		{"a named server", []string{"--nats-monitor", namedMonitor}, cli.ExitFindings, []string{
			"nats " + named.Name() + " (" + namedMonitor + "): jetstream.sync_interval=2m0s"}},
		{"one stream", []string{"--nats", weak.ClientURL(), "--nats-stream", "ORDERS"}, cli.ExitFindings, []string{"nats stream ORDERS: replicas=1"}},
		{"sync_interval: always", []string{"--nats-monitor", strongMonitor}, cli.ExitOK, nil},
		{"a missing stream", []string{"--nats", weak.ClientURL(), "--nats-stream", "ORDERS", "--nats-stream", "NOPE"}, cli.ExitUsage,
			[]string{"nats stream ORDERS: replicas=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, rep, errOut := runDoctor(t, tt.args...)
			if got := found(rep); code != tt.code || !slices.Equal(got, tt.want) {
				t.Errorf("exit %d (want %d), findings %q, want %q\n%s", code, tt.code, got, tt.want, errOut)
			}
			if code == cli.ExitUsage && !strings.Contains(errOut, "stream NOPE: ") {
				t.Errorf("stderr %q does not name the missing stream", errOut)
			}
		})
	}
}

// TestDoctorPostgres: the throwaway cluster of scripts/with-postgres.sh
// (make test-go) runs with fsync, full_page_writes and synchronous_commit
// off on its command line: three findings. A cluster of its own started
// with PostgreSQL's durable defaults (scripts/pg-start.sh with
// MSGCONTRACT_PG_DURABLE=1, which ALTER SYSTEM can change) is clean, is
// found weakened after ALTER SYSTEM and a reload, and a DSN that turns
// synchronous_commit off for its sessions is a finding on its own.
func TestDoctorPostgres(t *testing.T) {
	t.Parallel()
	shared := os.Getenv("MSGCONTRACT_PG_DSN")
	if shared == "" {
		t.Skip("MSGCONTRACT_PG_DSN is not set; run under scripts/with-postgres.sh to test on PostgreSQL")
	}
	weak := []string{"fsync=off", "full_page_writes=off", "synchronous_commit=off"}
	if code, rep, errOut := runDoctor(t, "--postgres", shared); code != cli.ExitFindings || !slices.Equal(settingsOf(rep), weak) {
		t.Fatalf("with-postgres.sh's cluster: exit %d, findings %q (want %q)\n%s", code, settingsOf(rep), weak, errOut)
	}
	// --from-env reads the same DSN.
	if code, rep, _ := runDoctor(t, "--from-env"); code != cli.ExitFindings || !slices.Equal(settingsOf(rep), weak) {
		t.Fatalf("--from-env: exit %d %q", code, settingsOf(rep))
	}

	dsn := durablePostgres(t)
	if code, rep, errOut := runDoctor(t, "--postgres", dsn); code != cli.ExitOK || len(rep.Findings) != 0 || len(rep.Checked) != 1 {
		t.Fatalf("durable cluster: exit %d, findings %q, checked %q\n%s", code, found(rep), rep.Checked, errOut)
	}
	code, out, _ := run(t, "doctor", "--postgres", dsn)
	if code != cli.ExitOK || !strings.HasPrefix(out, "0 findings; checked: postgres 127.0.0.1:") {
		t.Fatalf("durable cluster, text: exit %d %q", code, out)
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	code, rep, _ := runDoctor(t, "--postgres", dsn+sep+"options=-c%20synchronous_commit%3Doff")
	if got := settingsOf(rep); code != cli.ExitFindings || !slices.Equal(got, []string{"synchronous_commit=off"}) {
		t.Fatalf("synchronous_commit=off in the DSN: exit %d, findings %q", code, got)
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, s := range []string{`ALTER SYSTEM SET fsync = off`, `ALTER SYSTEM SET full_page_writes = off`,
		`ALTER SYSTEM SET synchronous_commit = off`, `SELECT pg_reload_conf()`} {
		if _, err := admin.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	// New sessions see the reload once the postmaster has read it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, rep, _ = runDoctor(t, "--postgres", dsn)
		if code != cli.ExitOK || time.Now().After(deadline) {
			break
		}
	}
	if got := settingsOf(rep); code != cli.ExitFindings || !slices.Equal(got, weak) {
		t.Fatalf("weakened with ALTER SYSTEM: exit %d, findings %q (want %q)", code, got, weak)
	}
	for _, f := range rep.Findings {
		if !strings.Contains(f.Fix, "= on") {
			t.Errorf("%s: the fix does not say what to set: %q", f.Setting, f.Fix)
		}
	}
}

// durablePostgres starts a throwaway cluster with PostgreSQL's durable
// defaults (scripts/pg-start.sh, MSGCONTRACT_PG_DURABLE=1), stopped and
// removed when t ends, and returns its DSN.
func durablePostgres(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "pg-start.sh"))
	cmd.Env = append(os.Environ(), "MSGCONTRACT_PG_DURABLE=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	dir := regexp.MustCompile(`pg-start: cluster in (\S+) on `).FindStringSubmatch(stderr.String())
	if dir != nil {
		t.Cleanup(func() {
			if out, err := exec.Command("bash", filepath.Join(dir[1], "kill.sh")).CombinedOutput(); err != nil {
				t.Errorf("stop the cluster in %s: %v\n%s", dir[1], err, out)
			}
			os.RemoveAll(dir[1])
		})
	}
	if err != nil {
		t.Fatalf("pg-start.sh: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// settingsOf lists a report's findings as "setting=value".
func settingsOf(rep doctor.Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Setting+"="+f.Value)
	}
	return out
}
