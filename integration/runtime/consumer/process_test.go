package consumer_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/msgcontract/msgcontract/runtime-go/classify"
	"github.com/msgcontract/msgcontract/runtime-go/consumer"
	"github.com/msgcontract/msgcontract/runtime-go/dlq"
	"github.com/msgcontract/msgcontract/runtime-go/envelope"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb"
	"github.com/msgcontract/msgcontract/runtime-go/sqldb/sqlitedb"
	"github.com/msgcontract/msgcontract/runtime-go/transport"
	"github.com/msgcontract/msgcontract/runtime-go/transport/natsjs"
	"github.com/msgcontract/msgcontract/runtime-go/transport/sqlitequeue"
)

// The test binary re-executes itself as a consumer process when
// childEnv is set; the fault tests 5 and 6 SIGKILL such processes.
const (
	childEnv      = "MSGCONTRACT_FAULT_CHILD" // "hang" or "normal"
	childBizEnv   = "MSGCONTRACT_FAULT_BUSINESS_DB"
	childQueueEnv = "MSGCONTRACT_FAULT_QUEUE_DB"
	childIDEnv    = "MSGCONTRACT_FAULT_CHILD_ID"
	childNATSEnv  = "MSGCONTRACT_FAULT_NATS_URL" // set: NATS instead of the SQLite queue
	childLease    = 2 * time.Second
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	os.Exit(m.Run())
}

// runChild is a consumer process. In "hang" mode its handler fails the
// first attempt with a retryable code and blocks forever in the second,
// after its business write, announcing "IN_HANDLER" on stdout. In
// "normal" mode it writes the effect and commits. In "fail" mode every
// attempt fails with a retryable code; "die-after-retry" too, and the
// process SIGKILLs itself as soon as its first retry copy is published,
// before the delivery is settled (Fault 8).
func runChild(mode string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	db, err := sqlitedb.Open(os.Getenv(childBizEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	tr, isKafka, err := kafkaChildTransport(ctx)
	if !isKafka {
		tr, isKafka, err = rabbitmqChildTransport(ctx) // an external broker too
	}
	if isKafka {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	} else if url := os.Getenv(childNATSEnv); url != "" {
		nc, err := nats.Connect(url)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if tr, err = natsjs.New(ctx, natsjs.Config{Conn: nc, AckWait: childLease, FetchWait: 200 * time.Millisecond}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	} else if tr, err = sqlitequeue.Open(ctx, os.Getenv(childQueueEnv),
		sqlitequeue.Config{Lease: childLease, PollInterval: 10 * time.Millisecond}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if mode == "die-after-retry" {
		tr = &dyingSubscriber{Subscriber: tr}
	}
	c, err := consumer.New(consumer.Config{DB: db, Dialect: sqldb.SQLite, Subscriber: tr, Group: "g",
		Workers: 2, HandlerTimeout: time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	id := os.Getenv(childIDEnv)
	err = consumer.Register(c, handlerName, newSpec(fastPolicy), func() *wrapperspb.StringValue { return &wrapperspb.StringValue{} },
		func(ctx context.Context, tx *sql.Tx, m *wrapperspb.StringValue) error {
			env, _ := consumer.EnvelopeFrom(ctx)
			if mode == "fail" || mode == "die-after-retry" {
				return classify.NewError(codeSystem, "never recovers")
			}
			if mode == "hang" && env.GetRetryCount() == 0 {
				return classify.NewError(codeSystem, "first attempt fails")
			}
			if err := insertEffect(ctx, tx, id); err != nil {
				return err
			}
			if mode == "hang" {
				fmt.Printf("IN_HANDLER retry_count=%d\n", env.GetRetryCount())
				select {}
			}
			time.Sleep(2 * time.Millisecond)
			return nil
		})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("READY")
	if err := c.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

type child struct {
	cmd   *exec.Cmd
	lines chan string
}

func startChild(t *testing.T, mode, id string, p *processFixture) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childIDEnv+"="+id, childBizEnv+"="+p.bizPath,
		childQueueEnv+"="+p.queuePath, childNATSEnv+"="+p.natsURL)
	cmd.Env = append(cmd.Env, p.childEnv...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
		close(c.lines)
	}()
	t.Cleanup(func() { c.kill() })
	c.expect(t, "READY")
	return c
}

func (c *child) expect(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(90 * time.Second)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("child exited before printing %q", want)
			}
			if l == want {
				return
			}
		case <-timeout:
			t.Fatalf("timed out waiting for the child to print %q", want)
		}
	}
}

func (c *child) kill() {
	if c.cmd.ProcessState == nil {
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		_ = c.cmd.Wait()
	}
}

// sigkill is the fault itself: it SIGKILLs the child and fails the test
// unless the child really ended by that signal. A child that had already
// exited (crashed, or finished early; a zombie still takes the signal)
// would make the fault test prove nothing about a kill.
func (c *child) sigkill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	_ = c.cmd.Wait()
	ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended with %v, not by SIGKILL: the fault did not happen", c.cmd.ProcessState)
	}
}

// processFixture is a business database on disk and a transport (the
// SQLite queue file, or a NATS server in this process) shared with child
// processes.
type processFixture struct {
	bizPath, queuePath, natsURL string
	childEnv                    []string // more variables for the children
	db                          *sql.DB
	pub                         transport.Publisher
	backlog                     func() (int, error)
	deadLetters                 dlq.Store
}

func newProcessFixture(t *testing.T, transportName string) *processFixture {
	dir := t.TempDir()
	p := &processFixture{bizPath: filepath.Join(dir, "business.db"), queuePath: filepath.Join(dir, "queue.db")}
	var err error
	if p.db, err = sqlitedb.Open(p.bizPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.db.Close() })
	if _, err := p.db.Exec(`CREATE TABLE effects (biz_key TEXT NOT NULL, retry_count INTEGER NOT NULL, note TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if transportName == "kafka" {
		openKafkaProcess(t, p)
		return p
	}
	if transportName == "rabbitmq" {
		openRabbitMQProcess(t, p)
		return p
	}
	if transportName == "natsjs" {
		nc := startNATS(t)
		p.natsURL = nc.ConnectedUrl()
		tr, err := natsjs.New(ctx, natsjs.Config{Conn: nc, AckWait: childLease})
		if err != nil {
			t.Fatal(err)
		}
		// The group's durable consumer exists before the children start,
		// so its backlog counts from the first message.
		if _, err := tr.Subscribe(ctx, "g", []string{topic}); err != nil {
			t.Fatal(err)
		}
		p.pub, p.deadLetters = tr, tr
		p.backlog = func() (int, error) { return tr.Backlog(ctx, "g") }
		return p
	}
	tr, err := sqlitequeue.Open(ctx, p.queuePath, sqlitequeue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	p.pub, p.deadLetters = tr, tr
	p.backlog = func() (int, error) { return tr.Backlog(ctx, "") }
	return p
}

func (p *processFixture) publish(t *testing.T, keys ...string) {
	t.Helper()
	for _, k := range keys {
		env, err := event.NewEnvelope(newSpec(fastPolicy), wrapperspb.String("v"), k, event.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.pub.Publish(context.Background(), topic, env); err != nil {
			t.Fatal(err)
		}
	}
}

func (p *processFixture) scalar(t *testing.T, q string) int {
	t.Helper()
	var n int
	if err := p.db.QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (p *processFixture) drained() bool {
	n, err := p.backlog()
	return err == nil && n == 0
}

var processTransports = append(append([]string{"sqlitequeue", "natsjs"}, kafkaProcessTransports()...), rabbitmqProcessTransports()...)

// Fault 5: a consumer process SIGKILLed in the middle of its handler
// loses nothing: after a restart the message is processed exactly once,
// and its retry_count survived.
func TestFault5KilledMidHandler(t *testing.T) {
	t.Parallel()
	for _, tn := range processTransports {
		t.Run(tn, func(t *testing.T) {
			t.Parallel()
			testFault5(t, tn)
		})
	}
}

func testFault5(t *testing.T, transportName string) {
	p := newProcessFixture(t, transportName)
	// Published before any consumer runs: the message waits.
	p.publish(t, "order:5")
	a := startChild(t, "hang", "A", p)
	a.expect(t, "IN_HANDLER retry_count=1")
	a.sigkill(t)
	if got := p.scalar(t, `SELECT count(*) FROM effects`); got != 0 {
		t.Fatalf("effects after the kill = %d, want 0 (the handler's transaction never committed)", got)
	}
	startChild(t, "normal", "B", p)
	waitFor(t, "the restarted consumer's effect", func() bool {
		return p.scalar(t, `SELECT count(*) FROM effects`) == 1 && p.drained()
	})
	if got := p.scalar(t, `SELECT count(*) FROM effects`); got != 1 {
		t.Errorf("effects = %d, want 1", got)
	}
	if got := p.scalar(t, `SELECT retry_count FROM effects`); got != 1 {
		t.Errorf("retry_count at the successful run = %d, want 1 (it must survive the kill)", got)
	}
	if got := p.scalar(t, `SELECT count(*) FROM effects WHERE note = 'B'`); got != 1 {
		t.Errorf("effects by the restarted process = %d, want 1", got)
	}
	if got := p.scalar(t, `SELECT count(*) FROM msg_dedup`); got != 1 {
		t.Errorf("claims = %d, want 1", got)
	}
	if recs, _ := p.deadLetters.List(context.Background(), dlqAll); len(recs) != 0 {
		t.Errorf("dead letters = %d, want 0", len(recs))
	}
}

// Fault 6: two consumer processes share the embedded queue; one is
// SIGKILLed; the other takes over its leased messages. Nothing is lost and
// nothing is done twice.
func TestFault6Takeover(t *testing.T) {
	t.Parallel()
	for _, tn := range processTransports {
		t.Run(tn, func(t *testing.T) {
			t.Parallel()
			testFault6(t, tn)
		})
	}
}

func testFault6(t *testing.T, transportName string) {
	const n = 300
	p := newProcessFixture(t, transportName)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "order:6:" + strconv.Itoa(i)
	}
	p.publish(t, keys...)
	a := startChild(t, "normal", "A", p)
	startChild(t, "normal", "B", p)
	waitFor(t, "a third of the work done", func() bool { return p.scalar(t, `SELECT count(*) FROM effects`) >= n/3 })
	a.sigkill(t)
	killedAt := p.scalar(t, `SELECT count(*) FROM effects WHERE note = 'A'`)
	waitFor(t, "every message processed", func() bool {
		return p.scalar(t, `SELECT count(DISTINCT biz_key) FROM effects`) == n && p.drained()
	})
	if got := p.scalar(t, `SELECT count(*) FROM effects`); got != n {
		t.Errorf("effects = %d, want %d (a duplicate effect)", got, n)
	}
	if got := p.scalar(t, `SELECT count(DISTINCT biz_key) FROM effects`); got != n {
		t.Errorf("distinct keys = %d, want %d", got, n)
	}
	if got := p.scalar(t, `SELECT count(*) FROM effects WHERE note = 'A'`); got != killedAt {
		t.Errorf("the killed process has %d effects now, %d when killed", got, killedAt)
	}
	if got := p.scalar(t, `SELECT count(*) FROM effects WHERE note = 'B'`); got != n-killedAt {
		t.Errorf("the survivor did %d, want %d", got, n-killedAt)
	}
}

// dyingSubscriber's subscriptions publish the first retry copy and then
// SIGKILL their process before the delivery is settled: the crash between
// a retry's publish and its commit.
type dyingSubscriber struct{ transport.Subscriber }

func (d *dyingSubscriber) Subscribe(ctx context.Context, group string, topics []string) (transport.Subscription, error) {
	sub, err := d.Subscriber.Subscribe(ctx, group, topics)
	if err != nil {
		return nil, err
	}
	raw, ok := d.Subscriber.(interface {
		PublishRaw(ctx context.Context, topic string, body []byte) error
	})
	if !ok {
		return nil, fmt.Errorf("die-after-retry: %T cannot publish raw envelopes", d.Subscriber)
	}
	return &dyingSubscription{Subscription: sub, ext: sub.(transport.Extender), raw: raw.PublishRaw}, nil
}

type dyingSubscription struct {
	transport.Subscription
	ext transport.Extender
	raw func(ctx context.Context, topic string, body []byte) error
}

func (s *dyingSubscription) RetryMayFork()        {}
func (s *dyingSubscription) Lease() time.Duration { return s.ext.Lease() }
func (s *dyingSubscription) Extend(ctx context.Context, ds ...*transport.Delivery) error {
	return s.ext.Extend(ctx, ds...)
}

func (s *dyingSubscription) Retry(ctx context.Context, d *transport.Delivery, env *envelopepb.Envelope) error {
	body, err := envelope.Marshal(env)
	if err != nil {
		return err
	}
	if err := s.raw(ctx, topic, body); err != nil {
		return err
	}
	fmt.Println("RETRY_PUBLISHED")
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// Fault 8: a consumer process dies between a retry's publish and the
// settle of the delivery it copies, which then comes again to another
// process: two copies of the attempt exist, and still the message has one
// retry chain and one dead letter (docs/DESIGN.md, "One retry chain per
// message"). Only transports whose retry can fork.
func TestFault8KilledBetweenRetryAndCommit(t *testing.T) {
	t.Parallel()
	for _, tn := range processTransports {
		if tn == "sqlitequeue" {
			continue // its retry and settle are one transaction
		}
		t.Run(tn, func(t *testing.T) {
			t.Parallel()
			testFault8(t, tn)
		})
	}
}

func testFault8(t *testing.T, transportName string) {
	p := newProcessFixture(t, transportName)
	p.publish(t, "order:8:a", "order:8:b", "order:8:c")
	a := startChild(t, "die-after-retry", "A", p)
	a.expect(t, "RETRY_PUBLISHED")
	_ = a.cmd.Wait()
	if ws, ok := a.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended with %v, not by its SIGKILL: the fault did not happen", a.cmd.ProcessState)
	}
	startChild(t, "fail", "B", p)
	var recs []dlq.Record
	waitFor(t, "three dead letters, and nothing left", func() bool {
		var err error
		recs, err = p.deadLetters.List(context.Background(), dlqAll)
		return err == nil && len(recs) >= 3 && p.drained()
	})
	time.Sleep(2 * childLease) // a second chain would dead-letter by now
	recs, err := p.deadLetters.List(context.Background(), dlqAll)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, r := range recs {
		per[r.BizKey]++
	}
	for _, k := range []string{"order:8:a", "order:8:b", "order:8:c"} {
		if per[k] != 1 {
			t.Errorf("%s dead-lettered %d times, want once", k, per[k])
		}
	}
	if got := p.scalar(t, `SELECT count(*) FROM effects`); got != 0 {
		t.Errorf("effects = %d, want 0", got)
	}
}
