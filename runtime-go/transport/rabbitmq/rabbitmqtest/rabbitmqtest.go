// Package rabbitmqtest gives tests the throwaway broker that
// scripts/with-rabbitmq.sh starts (make test-rabbitmq) and a fresh,
// isolated Transport on it.
package rabbitmqtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/transport/rabbitmq"
)

// Env names the variable holding the broker's AMQP URL.
const Env = "MSGCONTRACT_TEST_RABBITMQ"

// URL returns the broker's URL or fails the test with what to run.
func URL(t testing.TB) string {
	t.Helper()
	v := os.Getenv(Env)
	if v == "" {
		t.Fatalf("%s is not set: run the RabbitMQ tests through `make test-rabbitmq` "+
			"or `bash scripts/with-rabbitmq.sh go test -tags rabbitmq ...`", Env)
	}
	return v
}

// Prefix returns a fresh name prefix, so each test has its own exchanges
// and queues on the shared broker.
func Prefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "t" + hex.EncodeToString(b[:])
}

// New returns a Transport on the test broker with cfg's settings, a
// fresh Prefix when cfg has none, closed when the test ends.
func New(t testing.TB, cfg rabbitmq.Config) *rabbitmq.Transport {
	t.Helper()
	cfg.URL = URL(t)
	if cfg.Prefix == "" {
		cfg.Prefix = Prefix()
	}
	tr, err := rabbitmq.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}
