package rocketmq

import (
	"context"

	"github.com/msgcontract/msgcontract/runtime-go/dlq"
)

// DeadLetterAgain stores rec as DeadLetter does, without a delivery to
// settle: what a redelivered copy that goes on again writes.
func (t *Transport) DeadLetterAgain(ctx context.Context, rec *dlq.Record) error {
	return t.storeRecord(ctx, rec)
}

// CreateTopic creates topic on broker as the transport does.
func CreateTopic(ctx context.Context, broker, topic string, queues int, messageType string) error {
	return createTopic(ctx, broker, topic, queues, messageType)
}
