//go:build kafka

package main

import (
	"testing"

	"github.com/msgcontract/msgcontract/runtime-go/transport/kafka/kafkatest"
)

// TestDemoKafka runs the payment-callback scenario on the real broker
// scripts/with-kafka.sh started (make test-demo-kafka): the relay frames
// the Java outbox's events with the registry's schema id, the Go payment
// service consumes them with runtime-go's kafka transport and the Python
// reconciliation service with KafkaConsumerLoop. Besides the invariants every
// transport must keep, every event record on the topic must carry one
// schema id and only the poison message none.
func TestDemoKafka(t *testing.T) {
	kafkatest.Brokers(t) // fails the test without a broker; openKafka reads the same variable
	res := testDemo(t, "kafka")
	if len(res.Framing) != 2 || res.Framing[-1] != 1 {
		t.Errorf("records by frame: %s; want one schema id and one unframed (the poison)", res.framingText())
	}
	for id, n := range res.Framing {
		if id >= 0 && n < res.Published {
			t.Errorf("%d records framed with schema id %d, want all %d published events", n, id, res.Published)
		}
	}
}
