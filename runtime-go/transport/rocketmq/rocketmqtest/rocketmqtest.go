// Package rocketmqtest gives tests the addresses of the real Apache
// RocketMQ scripts/with-rocketmq.sh started. Tests that use it are built
// with the "rocketmq" tag (make test-rocketmq), and such a test without a
// broker fails: it is never skipped.
package rocketmqtest

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// Env names the variables scripts/with-rocketmq.sh sets.
const (
	EnvNameServer = "MSGCONTRACT_ROCKETMQ_NAMESRV"
	EnvBroker     = "MSGCONTRACT_ROCKETMQ_BROKER"
)

// Addrs returns the name server and the broker, failing t when they are
// not configured.
func Addrs(t testing.TB) (nameServer, broker string) {
	t.Helper()
	nameServer, broker = os.Getenv(EnvNameServer), os.Getenv(EnvBroker)
	if nameServer == "" || broker == "" {
		t.Fatalf("%s and %s are not set: run the RocketMQ tests through `make test-rocketmq` "+
			"(scripts/with-rocketmq.sh starts a throwaway RocketMQ)", EnvNameServer, EnvBroker)
	}
	return nameServer, broker
}

var seq atomic.Int64

// Namespace returns a topic and group prefix no other test uses.
func Namespace() string {
	return fmt.Sprintf("t%d-%d-%d_", time.Now().UnixNano()%1_000_000_000, os.Getpid(), seq.Add(1))
}
