//go:build kafka

package kafka_test

import (
	"context"
	"io"
	"net"
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
	ns := kafkatest.Namespace() // not a fixed one: make test-kafka-all runs every Kafka suite on one broker
	tr := newTransport(t, func(c *kafka.Config) { c.CreateTopics = &off; c.Namespace = ns })
	_, err := tr.Subscribe(context.Background(), "g", []string{"nowhere"})
	if err == nil || !strings.Contains(err.Error(), "topic "+ns+"nowhere does not exist") {
		t.Fatalf("subscribe: %v", err)
	}
	err = tr.Publish(context.Background(), "nowhere", nil)
	if err == nil || !strings.Contains(err.Error(), "topic "+ns+"nowhere does not exist") {
		t.Fatalf("publish: %v", err)
	}
}

// A broker that starts listening a second after New began (one being
// restarted: connections refused meanwhile) is waited for, within
// ConnectTimeout, instead of failing at the first refused connection.
func TestNewWaitsForBroker(t *testing.T) {
	t.Parallel()
	broker := kafkatest.Brokers(t)[0]
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // refused until the proxy below listens on it
	go func() {
		time.Sleep(time.Second)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		t.Cleanup(func() { l.Close() })
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { // forward to the real broker, whose metadata names itself
				defer c.Close()
				b, err := net.Dial("tcp", broker)
				if err != nil {
					return
				}
				defer b.Close()
				go io.Copy(b, c)
				io.Copy(c, b)
			}()
		}
	}()
	tr, err := kafka.New(context.Background(), kafka.Config{Brokers: []string{addr}, Namespace: kafkatest.Namespace(),
		ConnectTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("New with the broker up after a second: %v", err)
	}
	tr.Close()
}
