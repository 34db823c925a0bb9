package rocketmq

import (
	"context"

	"github.com/msgcontract/msgcontract/runtime-go/txcheck"

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

// SimulateCrash makes p send no verdict after the business transaction
// commits or rolls back, as a process that dies then: the broker's
// check-back decides.
func (p *TxProducer) SimulateCrash() { p.crash.Store(true) }

// ObserveChecks sends every check-back's answer of p to ch.
func (p *TxProducer) ObserveChecks(ch chan<- txcheck.Answer) { p.checked.Store(&ch) }

// CreateGroup creates a subscription group on broker as EnsureTopics
// does for a FIFO group.
func CreateGroup(ctx context.Context, broker, group string, orderly bool) error {
	return createGroup(ctx, broker, group, orderly)
}
