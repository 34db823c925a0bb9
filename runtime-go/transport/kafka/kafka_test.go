//go:build kafka

package kafka_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka"
	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka/kafkatest"
	"github.com/msgcontract/msgcontract/runtime-go/transport/transporttest"
)

func newTransport(t *testing.T, mutate func(*kafka.Config)) *kafka.Transport {
	t.Helper()
	cfg := kafka.Config{Brokers: kafkatest.Brokers(t), Namespace: kafkatest.Namespace(), Partitions: 1,
		SessionTimeout: 3 * time.Second}
	if mutate != nil {
		mutate(&cfg)
	}
	tr, err := kafka.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

func TestSuite(t *testing.T) {
	t.Parallel()
	transporttest.Run(t, func(t *testing.T, lease time.Duration) transporttest.Transport {
		return newTransport(t, func(c *kafka.Config) { c.Lease = lease })
	})
}

// With CreateTopics off, a missing topic is an error that names it.
func TestMissingTopic(t *testing.T) {
	t.Parallel()
	off := false
	tr := newTransport(t, func(c *kafka.Config) { c.CreateTopics = &off; c.Namespace = "missing." })
	_, err := tr.Subscribe(context.Background(), "g", []string{"nowhere"})
	if err == nil || !strings.Contains(err.Error(), "topic missing.nowhere does not exist") {
		t.Fatalf("subscribe: %v", err)
	}
	err = tr.Publish(context.Background(), "nowhere", nil)
	if err == nil || !strings.Contains(err.Error(), "topic missing.nowhere does not exist") {
		t.Fatalf("publish: %v", err)
	}
}
