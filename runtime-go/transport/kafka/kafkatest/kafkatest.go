// Package kafkatest gives tests the address of the real Apache Kafka
// broker scripts/with-kafka.sh started. Tests that use it are built with
// the "kafka" tag (make test-kafka), and such a test without a broker
// fails: it is never skipped.
package kafkatest

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Env is the variable scripts/with-kafka.sh sets to the broker's address.
const Env = "MSGCONTRACT_KAFKA_BROKERS"

// Brokers returns the seed brokers, failing t when none are configured.
func Brokers(t testing.TB) []string {
	t.Helper()
	v := os.Getenv(Env)
	if v == "" {
		t.Fatalf("%s is not set: run the Kafka tests through `make test-kafka` "+
			"(scripts/with-kafka.sh starts a throwaway broker)", Env)
	}
	return strings.Split(v, ",")
}

var seq atomic.Int64

// Namespace returns a topic and group prefix no other test uses, so tests
// share one broker without seeing each other's records: the Go test
// processes of every Kafka suite (make test-kafka-all) among them, which
// the process id tells apart.
func Namespace() string {
	return fmt.Sprintf("t%d-%d-%d.", time.Now().UnixNano()%1_000_000_000, os.Getpid(), seq.Add(1))
}
