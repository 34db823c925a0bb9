//go:build kafka

// Package kafkainterop_test checks runtime-go and the Python runtime against
// each other and against confluent-kafka's own Protobuf serializer and
// deserializer, on a real broker (scripts/with-kafka.sh) with msgcontract's
// registry served in-process. Run by `make test-kafka-python`.
package kafkainterop_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"

	paymentv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1"
	"github.com/msgcontract/msgcontract/registry/client"
	"github.com/msgcontract/msgcontract/registry/registrytest"
	"github.com/msgcontract/msgcontract/runtime-go/confluent"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/pgdb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka/kafkatest"
)

var root, _ = filepath.Abs("../..")

// paymentSubject is the subject startRegistry registers the example
// payment contract as.
const paymentSubject = "order-event-value"

// startRegistry serves msgcontract's registry on a fresh SQLite store and
// registers the example payment contract as order-event-value.
func startRegistry(t *testing.T) (string, *client.Client) {
	t.Helper()
	c := registrytest.Start(t)
	register(t, c, paymentSubject, "examples/proto/shop/payment/v1/payment.proto")
	return c.URL, c
}

// register registers file (relative to the repository root) as subject.
func register(t *testing.T, c *client.Client, subject, file string) int64 {
	t.Helper()
	return registrytest.Register(t, c, subject, filepath.Join(root, file))
}

// python runs testdata/pyinterop.py with the project's .venv, where
// msgcontract-runtime[kafka] is installed.
func python(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	py := filepath.Join(root, ".venv", "bin", "python")
	if _, err := os.Stat(py); err != nil {
		t.Fatalf("%s: %v (make test-kafka-python installs it)", py, err)
	}
	cmd := exec.Command(py, append([]string{filepath.Join(root, "integration/kafkainterop/testdata/pyinterop.py")}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "runtime-python/tests_kafka")+
		string(os.PathListSeparator)+filepath.Join(root, "runtime-python/src"))
	cmd.Stderr = os.Stderr
	return cmd
}

func newTransport(t *testing.T, ns, registry string) *kafka.Transport {
	t.Helper()
	tr, err := kafka.New(context.Background(), kafka.Config{Brokers: kafkatest.Brokers(t), Namespace: ns,
		Partitions: 2, SessionTimeout: 6 * time.Second, Confluent: &kafka.ConfluentConfig{RegistryURL: registry}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// runConsumer runs a Go consumer of group with a PaySuccess handler that
// records its effect in db's effects table as who.
func runConsumer(t *testing.T, tr *kafka.Transport, db *sql.DB, d sqldb.Dialect, group, who string) {
	t.Helper()
	c, err := consumer.New(consumer.Config{DB: db, Dialect: d, Subscriber: tr, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	err = paymentv1.RegisterPaySuccessHandler(c, group+".pay", func(ctx context.Context, tx *sql.Tx, m *paymentv1.PaySuccess) error {
		key, _ := m.BizKey()
		_, err := tx.ExecContext(ctx, `INSERT INTO effects (biz_key, who) VALUES ($1, $2)`, key, who)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

func sqliteDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sqlitedb.Open(filepath.Join(t.TempDir(), "biz.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE effects (biz_key TEXT NOT NULL, who TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func effects(t *testing.T, db *sql.DB, where string) (n, distinct int) {
	t.Helper()
	if err := db.QueryRow(`SELECT count(*), count(DISTINCT biz_key) FROM effects`+where).Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	return n, distinct
}

// waitFor polls cond; the deadline turns a broken run into a failure, not a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("not reached within 2m: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func drained(t *testing.T, tr *kafka.Transport, group string) func() bool {
	return func() bool {
		n, err := tr.Backlog(context.Background(), group, "order-event")
		return err == nil && n == 0
	}
}

// TestPythonSerializerToGo: records framed by confluent-kafka's Python
// ProtobufSerializer (through KafkaPublisher), each published twice, are
// applied once each by a runtime-go consumer.
func TestPythonSerializerToGo(t *testing.T) {
	reg, _ := startRegistry(t)
	ns := kafkatest.Namespace()
	tr := newTransport(t, ns, reg)
	db := sqliteDB(t)
	out, err := python(t, "publish", reg, strings.Join(kafkatest.Brokers(t), ","), ns, t.TempDir(), "10").Output()
	if err != nil {
		t.Fatalf("python publish: %v", err)
	}
	t.Logf("python: %s", out)
	runConsumer(t, tr, db, sqldb.SQLite, "payments", "go")
	waitFor(t, "10 effects and the group drained", func() bool {
		n, _ := effects(t, db, "")
		return n >= 10 && drained(t, tr, "payments")()
	})
	if n, d := effects(t, db, ""); n != 10 || d != 10 {
		t.Fatalf("effects = %d (%d distinct), want 10 once each", n, d)
	}
	var claims int
	if err := db.QueryRow(`SELECT count(*) FROM msg_dedup`).Scan(&claims); err != nil || claims != 10 {
		t.Fatalf("claims = %d, %v", claims, err)
	}
	if recs, err := tr.List(context.Background(), dlq.Filter{Topic: "order-event"}); err != nil || len(recs) != 0 {
		t.Fatalf("dead letters = %v, %v; want none", recs, err)
	}
}

// TestGoToPythonDeserializer: records runtime-go frames are read by
// confluent-kafka's Python ProtobufDeserializer.
func TestGoToPythonDeserializer(t *testing.T) {
	reg, rc := startRegistry(t)
	ns := kafkatest.Namespace()
	tr := newTransport(t, ns, reg)
	ctx := context.Background()
	// Registering the same text again answers the id it has.
	wantID := fmt.Sprint(register(t, rc, paymentSubject, "examples/proto/shop/payment/v1/payment.proto"))
	for i := range 3 {
		m := &paymentv1.PaySuccess{OrderId: fmt.Sprintf("go-%d", i), Amount: int64(500 + i), Currency: "EUR"}
		if err := paymentv1.PublishPaySuccess(ctx, tr, m, event.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := python(t, "read", strings.Join(kafkatest.Brokers(t), ","), ns, t.TempDir(), "3").Output()
	if err != nil {
		t.Fatalf("python read: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		t.Fatalf("python read %d records: %s", len(lines), out)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var id, amount, key, subject, schemaID, recordKey string
		if _, err := fmt.Sscan(l, &id, &amount, &key, &subject, &schemaID, &recordKey); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if key != "order_id:"+id+":PAY_SUCCESS" || recordKey != key || subject != paymentSubject || schemaID != wantID {
			t.Errorf("record %q: biz_key, record key, subject or schema id wrong", l)
		}
		seen[id+"/"+amount] = true
	}
	for i := range 3 {
		if !seen[fmt.Sprintf("go-%d/%d", i, 500+i)] {
			t.Errorf("go-%d not read back: %s", i, out)
		}
	}
}

// TestForeignSubjectDeadLetters: a framed record whose schema id belongs to
// another subject, one the registry does not know, and one without the
// envelope header are dead-lettered with reason "schema"; a good record
// beside them is applied.
func TestForeignSubjectDeadLetters(t *testing.T) {
	reg, rc := startRegistry(t)
	otherID := register(t, rc, "inventory-event-value", "examples/proto/shop/inventory/v1/inventory.proto")
	ns := kafkatest.Namespace()
	tr := newTransport(t, ns, reg)
	db := sqliteDB(t)
	ctx := context.Background()
	if err := paymentv1.PublishPaySuccess(ctx, tr, &paymentv1.PaySuccess{OrderId: "good", Amount: 1}, event.Options{}); err != nil {
		t.Fatal(err)
	}
	env, err := paymentv1.NewPaySuccessEnvelope(&paymentv1.PaySuccess{OrderId: "foreign", Amount: 2}, event.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := proto.Clone(env).(*envelopepb.Envelope)
	h.Payload = nil
	hb, err := envelope.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	topic := ns + "order-event"
	recs := []*kgo.Record{
		{Topic: topic, Key: []byte("foreign"), Value: confluent.Frame(int32(otherID), []int{0}, env.GetPayload()),
			Headers: []kgo.RecordHeader{{Key: kafka.HeaderEnvelope, Value: hb}}},
		{Topic: topic, Key: []byte("unknown-id"), Value: confluent.Frame(9999, []int{0}, env.GetPayload()),
			Headers: []kgo.RecordHeader{{Key: kafka.HeaderEnvelope, Value: hb}}},
		{Topic: topic, Key: []byte("no-header"), Value: confluent.Frame(1, []int{0}, env.GetPayload())},
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkatest.Brokers(t)...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, tr, db, sqldb.SQLite, "payments", "go")
	var dead []dlq.Record
	waitFor(t, "3 schema dead letters and 1 effect", func() bool {
		dead, err = tr.List(ctx, dlq.Filter{Topic: "order-event", Reason: dlq.ReasonSchema})
		n, _ := effects(t, db, "")
		return err == nil && len(dead) == 3 && n == 1
	})
	var msgs []string
	for _, r := range dead {
		msgs = append(msgs, r.Error)
		if r.Group != "payments" || r.Code != -5 || !confluent.IsFramed(r.Envelope) {
			t.Errorf("record %+v: want group payments, code -5, the framed value as delivered", r)
		}
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{"not to the event's subject order-event-value", "refused: HTTP 404", "no msgcontract.envelope header"} {
		if !strings.Contains(all, want) {
			t.Errorf("no dead letter says %q:\n%s", want, all)
		}
	}
	if n, _ := effects(t, db, " WHERE biz_key = 'order_id:foreign:PAY_SUCCESS'"); n != 0 {
		t.Error("the foreign record was applied")
	}
}

// TestGoAndPythonShareGroup: a Go and a Python member of one group share
// the partitions of a framed topic over one PostgreSQL database; every
// event, published twice, is applied once, by one of them.
func TestGoAndPythonShareGroup(t *testing.T) { shareGroup(t, "member") }

// TestGoAndPythonAsyncShareGroup: the same with the Python member an
// AsyncConsumer on aio.kafka (asyncpg): the Confluent framing through the
// registry and the cooperative-sticky group both work from asyncio.
func TestGoAndPythonAsyncShareGroup(t *testing.T) { shareGroup(t, "member-async") }

func shareGroup(t *testing.T, member string) {
	reg, _ := startRegistry(t)
	ns := kafkatest.Namespace()
	db, dsn := schemaDB(t, "ki_", ns)
	if _, err := db.Exec(`CREATE TABLE effects (biz_key TEXT NOT NULL, who TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	tr, err := kafka.New(context.Background(), kafka.Config{Brokers: kafkatest.Brokers(t), Namespace: ns,
		Partitions: 6, SessionTimeout: 6 * time.Second, Confluent: &kafka.ConfluentConfig{RegistryURL: reg}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	runConsumer(t, tr, db, sqldb.Postgres, "recon", "go") // migrates msg_dedup first

	stop := filepath.Join(t.TempDir(), "stop")
	py := python(t, member, reg, strings.Join(kafkatest.Brokers(t), ","), ns, t.TempDir(), dsn, stop)
	stdout, err := py.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := py.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
		}
	}()
	last := func(prefix string) string {
		mu.Lock()
		defer mu.Unlock()
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.HasPrefix(lines[i], prefix) {
				return strings.TrimPrefix(lines[i], prefix)
			}
		}
		return ""
	}
	stopped := false
	defer func() {
		if !stopped {
			os.WriteFile(stop, nil, 0o644)
			py.Wait()
		}
	}()
	// Both hold some of the six event partitions before anything is published.
	waitFor(t, "the Python member holds some, not all, event partitions", func() bool {
		a := last("assigned ")
		return a != "" && len(strings.Split(a, ",")) < 6
	})
	ctx := context.Background()
	const n = 120
	for i := range n {
		env, err := paymentv1.NewPaySuccessEnvelope(&paymentv1.PaySuccess{OrderId: fmt.Sprintf("o-%d", i), Amount: int64(i)}, event.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := tr.Publish(ctx, "order-event", env); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitFor(t, "every event applied and the group drained", func() bool {
		_, d := effects(t, db, "")
		return d >= n && drained(t, tr, "recon")()
	})
	os.WriteFile(stop, nil, 0o644)
	if err := py.Wait(); err != nil {
		t.Fatalf("python member: %v", err)
	}
	stopped = true
	<-readDone
	total, distinct := effects(t, db, "")
	goN, _ := effects(t, db, " WHERE who = 'go'")
	pyN, _ := effects(t, db, " WHERE who = 'py'")
	t.Logf("effects: go %d, python %d; python: %s", goN, pyN, last("member: "))
	if total != n || distinct != n {
		t.Fatalf("effects = %d (%d distinct), want %d once each", total, distinct, n)
	}
	if goN == 0 || pyN == 0 {
		t.Fatalf("one member applied nothing (go %d, python %d): the partitions were not shared", goN, pyN)
	}
}

// TestPythonDeadLettersInGoStore: dead letters the Python loop writes are
// records of runtime-go's dlq.Store over T.dlq (what `msgcontract dlq
// --kafka` lists), and a replay puts the envelope on the group's retry topic.
func TestPythonDeadLettersInGoStore(t *testing.T) {
	ns := kafkatest.Namespace()
	out, err := python(t, "poison", strings.Join(kafkatest.Brokers(t), ","), ns, t.TempDir(),
		filepath.Join(t.TempDir(), "biz.db")).Output()
	if err != nil {
		t.Fatalf("python poison: %v", err)
	}
	t.Logf("python: %s", out)
	tr, err := kafka.New(context.Background(), kafka.Config{Brokers: kafkatest.Brokers(t), Namespace: ns, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := context.Background()
	recs, err := tr.List(ctx, dlq.Filter{Topic: "order-event"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("records: %+v", recs)
	}
	byReason := map[dlq.Reason]dlq.Record{}
	for _, r := range recs {
		byReason[r.Reason] = r
		if r.Group != "recon" || r.Topic != "order-event" || r.DeadAt.IsZero() || r.FirstFailedAt.IsZero() {
			t.Errorf("record %+v: group, topic or times missing", r)
		}
	}
	dec, ref := byReason[dlq.ReasonDecode], byReason[dlq.ReasonNonRetryable]
	if dec.Code != consumer.CodeDecode || dec.BizKey != "order_id:garbled:PAY_SUCCESS" {
		t.Errorf("decode record: %+v", dec)
	}
	if ref.Code != 40001 || ref.Attempts != 1 || ref.Handler != "recon.pay" || !strings.Contains(ref.Error, "order unknown") {
		t.Errorf("non_retryable record: %+v", ref)
	}
	env, err := envelope.Unmarshal(ref.Envelope)
	if err != nil || env.GetBizKey() != "order_id:refused:PAY_SUCCESS" {
		t.Fatalf("the record keeps the delivered envelope: %v %v", env, err)
	}
	if err := tr.Replay(ctx, ref.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := tr.Get(ctx, ref.ID); err != nil || got.ReplayCount != 1 {
		t.Fatalf("after replay: %+v, %v", got, err)
	}
}

// schemaDB makes a PostgreSQL schema of the test's own (prefix and the
// namespace ns) on MSGCONTRACT_PG_DSN: the business database the test's Go
// and Python members share. It returns the database, closed when the test
// ends, and the DSN the Python member opens it by.
func schemaDB(t *testing.T, prefix, ns string) (*sql.DB, string) {
	t.Helper()
	base := os.Getenv("MSGCONTRACT_PG_DSN")
	if base == "" {
		t.Fatal("MSGCONTRACT_PG_DSN is not set: run under scripts/with-postgres.sh (make test-kafka-python)")
	}
	schema := prefix + strings.NewReplacer(".", "", "-", "_").Replace(ns)
	admin, err := pgdb.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatal(err)
	}
	dsn := withOptions(t, base, "-csearch_path="+schema)
	db, err := pgdb.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dsn
}

func withOptions(t *testing.T, dsn, opts string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		t.Fatalf("MSGCONTRACT_PG_DSN %q is not a URL", dsn)
	}
	q := u.Query()
	q.Set("options", opts)
	u.RawQuery = q.Encode()
	return u.String()
}
