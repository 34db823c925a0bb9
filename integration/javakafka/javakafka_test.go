//go:build kafka

package javakafka_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	paymentv1 "github.com/msgcontract/msgcontract/examples/gen/go/shop/payment/v1"
	"github.com/msgcontract/msgcontract/internal/surefire"
	"github.com/msgcontract/msgcontract/internal/testsummary"
	"github.com/msgcontract/msgcontract/registry/registrytest"
	"github.com/msgcontract/msgcontract/runtime-go/event"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka/kafkatest"
)

// framedByGo is how many PaySuccess records runtime-go frames for the JUnit
// suite to consume (WireTest.goFramedRecordsAreAppliedOnceByJava).
const framedByGo = 5

func TestJavaKafka(t *testing.T) {
	if os.Getenv("MSGCONTRACT_KAFKA_BROKERS") == "" {
		t.Fatal("MSGCONTRACT_KAFKA_BROKERS is not set: run under scripts/with-kafka.sh (make test-java-kafka)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	// msgcontract hands dlq to msgcontract-ops, which it finds beside it.
	run(t, root, "go", "build", "-o", filepath.Join(bin, "msgcontract"), "./cmd/msgcontract")
	run(t, root, "go", "build", "-o", filepath.Join(bin, "msgcontract-ops"), "./cmd/msgcontract-ops")
	run(t, filepath.Join(root, "runtime-go"), "go", "build", "-tags", "kafka", "-o", filepath.Join(bin, "kafkapeer"), "./bench/kafkapeer")

	mod := filepath.Join(root, "runtime-java", "kafka")
	reports := filepath.Join(mod, "target", "surefire-reports")
	if err := os.RemoveAll(reports); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("mvn", "-B", "-Dstyle.color=never", "install")
	cmd.Dir = mod
	reg := startRegistry(t, root)
	goNS := publishFramed(t, reg)
	cmd.Env = append(os.Environ(), "MSGCONTRACT_BIN="+filepath.Join(bin, "msgcontract"),
		"MSGCONTRACT_KAFKA_GO_PEER="+filepath.Join(bin, "kafkapeer"),
		"MSGCONTRACT_REGISTRY_URL="+reg, "MSGCONTRACT_KAFKA_GO_FRAMED_NS="+goNS,
		"MSGCONTRACT_KAFKA_GO_FRAMED_N="+strconv.Itoa(framedByGo))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mvn install in runtime-java/kafka: %v\n%s", err, surefire.Tail(out, 80))
	}
	// Surefire's reports count what ran: a test class Maven did not find
	// would otherwise pass as "nothing failed".
	ran, skipped := surefire.Reports(t, reports)
	want := surefire.Declared(t, filepath.Join(mod, "src", "test", "java"))
	if ran != want || skipped != 0 {
		t.Fatalf("%d JUnit tests ran, %d skipped; the sources declare %d\n%s", ran, skipped, want, surefire.Tail(out, 40))
	}
	testsummary.Report(t, "java-kafka", fmt.Sprintf("%d tests", ran))
}

// startRegistry serves msgcontract's registry on a fresh SQLite store with
// the example payment contract as order-event-value (runtime-go's framed
// records) and testdata/orders.proto as orders-value (the suite's topic).
func startRegistry(t *testing.T, root string) string {
	t.Helper()
	c := registrytest.Start(t)
	registrytest.Register(t, c, "order-event-value", filepath.Join(root, "examples/proto/shop/payment/v1/payment.proto"))
	registrytest.Register(t, c, "orders-value", filepath.Join(root, "integration/javakafka/testdata/orders.proto"))
	return c.URL
}

// publishFramed publishes framedByGo PaySuccess records (order ids go-0...)
// through runtime-go's kafka transport in the Confluent wire format, under
// a namespace of their own, which it returns.
func publishFramed(t *testing.T, reg string) string {
	t.Helper()
	ns := kafkatest.Namespace()
	tr, err := kafka.New(context.Background(), kafka.Config{Brokers: kafkatest.Brokers(t), Namespace: ns,
		Partitions: 2, SessionTimeout: 6 * time.Second, Confluent: &kafka.ConfluentConfig{RegistryURL: reg}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for i := range framedByGo {
		m := &paymentv1.PaySuccess{OrderId: fmt.Sprintf("go-%d", i), Amount: int64(100 + i), Currency: "EUR"}
		if err := paymentv1.PublishPaySuccess(context.Background(), tr, m, event.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
