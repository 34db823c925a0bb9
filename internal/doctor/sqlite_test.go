package doctor

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sqliteFile creates a SQLite file with a table, in journal mode mode.
func sqliteFile(t *testing.T, mode string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), mode+".db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode="+mode)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	return path
}

// settings lists the findings' "setting=value" in order.
func settings(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Setting+"="+f.Value)
	}
	return out
}

func TestCheckSQLite(t *testing.T) {
	t.Parallel()
	wal, del := sqliteFile(t, "WAL"), sqliteFile(t, "DELETE")
	tests := []struct {
		name, spec string
		want       []string // settings=value found
	}{
		{"WAL file, a bare path: sqlitedb.Open's NORMAL", wal,
			[]string{"synchronous=NORMAL (sqlitedb.Open's default; a bare path says nothing else)"}},
		{"sqlite: prefix", "sqlite:" + wal, []string{"synchronous=NORMAL (sqlitedb.Open's default; a bare path says nothing else)"}},
		{"WAL file, DSN with FULL", "file:" + wal + "?_synchronous=FULL", nil},
		{"WAL file, DSN with _sync=2", "file:" + wal + "?_sync=2", nil},
		{"WAL file, DSN without synchronous: SQLite's FULL", "file:" + wal, nil},
		{"WAL file, DSN with OFF", "file:" + wal + "?_synchronous=OFF", []string{"synchronous=OFF (the DSN's _synchronous)"}},
		{"rollback journal, FULL", "file:" + del + "?_synchronous=FULL", []string{"journal_mode=delete"}},
		{"rollback journal, the DSN converts it to WAL", "file:" + del + "?_journal_mode=WAL&_synchronous=EXTRA", nil},
		{"rollback journal, bare path", "sqlite://" + del,
			[]string{"journal_mode=delete", "synchronous=NORMAL (sqlitedb.Open's default; a bare path says nothing else)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, err := CheckSQLite(context.Background(), tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got := settings(fs); !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
			for _, f := range fs {
				if f.System != "sqlite" || f.Fix == "" || f.Risk == "" || !strings.Contains(f.String(), "fix: ") {
					t.Errorf("incomplete finding %+v", f)
				}
			}
		})
	}
	// The checks change nothing: the rollback-journal file is still one.
	if fs, _ := CheckSQLite(context.Background(), "file:"+del+"?_synchronous=FULL"); len(fs) != 1 {
		t.Errorf("the DSN's _journal_mode converted %s: %v", del, fs)
	}
	missing := filepath.Join(t.TempDir(), "missing.db")
	if _, err := CheckSQLite(context.Background(), missing); err == nil || !strings.Contains(err.Error(), "missing.db") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("CheckSQLite created %s: %v", missing, err)
	}
	notDB := filepath.Join(t.TempDir(), "text.db")
	if err := os.WriteFile(notDB, []byte(strings.Repeat("not a database\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckSQLite(context.Background(), notDB); err == nil {
		t.Error("a text file checked as a SQLite database")
	}
}

func TestClientConfigFindings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, props string
		check       func(string, map[string]string) []Finding
		want        []string
	}{
		{"kafka defaults", "bootstrap.servers=k:9092\n", kafkaClientFindings, nil},
		{"kafka all", "acks = all\nenable.idempotence: true\n", kafkaClientFindings, nil},
		{"kafka -1", "acks=-1\n", kafkaClientFindings, nil},
		{"kafka weak", "# producer\nacks=1\n! old\nenable.idempotence=false\n", kafkaClientFindings, []string{"acks=1", "enable.idempotence=false"}},
		{"kafka acks 0", "acks=0\n", kafkaClientFindings, []string{"acks=0"}},
		{"spring kafka", "spring.kafka.producer.acks=1\nspring.kafka.producer.properties.enable.idempotence=false\n", kafkaClientFindings,
			[]string{"spring.kafka.producer.acks=1", "spring.kafka.producer.properties.enable.idempotence=false"}},
		{"rabbit correlated", "spring.rabbitmq.publisher-confirm-type=correlated\n", rabbitClientFindings, nil},
		{"rabbit simple", "spring.rabbitmq.publisher-confirm-type: SIMPLE\n", rabbitClientFindings, nil},
		{"rabbit none", "spring.rabbitmq.publisher-confirm-type=none\n", rabbitClientFindings, []string{"spring.rabbitmq.publisher-confirm-type=none"}},
		{"rabbit unset", "spring.rabbitmq.host=r\n", rabbitClientFindings, []string{"spring.rabbitmq.publisher-confirm-type=unset (Spring's default: none)"}},
		{"rabbit old key", "spring.rabbitmq.publisher-confirms=true\n", rabbitClientFindings, nil},
		{"rabbit old key off", "spring.rabbitmq.publisher-confirms=false\n", rabbitClientFindings, []string{"spring.rabbitmq.publisher-confirms=false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props, err := parseProperties(strings.NewReader(tt.props))
			if err != nil {
				t.Fatal(err)
			}
			if got := settings(tt.check("client.properties", props)); !slices.Equal(got, tt.want) {
				t.Errorf("findings %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := CheckKafkaClientFile(filepath.Join(t.TempDir(), "none.properties")); err == nil {
		t.Error("a missing properties file read as clean")
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		err  string
	}{
		{"nothing", Config{}, "nothing to check"},
		{"kafka without brokers", Config{Kafka: &KafkaConfig{}}, "no seed brokers"},
		{"nats without URLs", Config{NATS: &NATSConfig{}}, "name a client URL"},
		{"nats monitor not http", Config{NATS: &NATSConfig{MonitorURL: "nats://h:4222"}}, "want http://host:port"},
		{"nats streams without URL", Config{NATS: &NATSConfig{MonitorURL: "http://h:8222", Streams: []string{"S"}}}, "without a client URL"},
		{"rabbitmq amqp URL", Config{RabbitMQ: &RabbitMQConfig{ManagementURL: "amqp://g:g@h:5672/"}}, "want http://user:password@host:15672"},
		{"negative timeout", Config{SQLite: []string{"x.db"}, Timeout: -1}, "want a positive duration"},
		{"valid", Config{SQLite: []string{"x.db"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (tt.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Validate() = %v, want %q", err, tt.err)
			}
		})
	}
}
