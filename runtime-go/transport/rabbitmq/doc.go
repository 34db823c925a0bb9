// Package rabbitmq is the RabbitMQ transport, on amqp091-go, for RabbitMQ
// 3.10 or later (quorum queues with message TTL and at-least-once dead
// lettering). docs/rabbitmq.md is the wire design the Java and Python
// runtimes follow; this is its summary.
//
// # Exchanges and queues
//
// Under Config.Prefix P (default "msgcontract"):
//
//	P                   topic exchange, alternate-exchange = P.unrouted;
//	                    a topic T is published with routing key T
//	P.retry             direct exchange; routing key = a group queue's name
//	P.delay             direct exchange; routing key = a delay queue's name
//	P.unrouted          fanout exchange and its quorum queue: messages no
//	                    group was bound for, kept for an operator
//	P/<group>/<topic>   a group's queue of a topic: quorum, durable, bound to
//	                    P with key <topic> and to P.retry with key its name
//	P.delay/<group>/<ms> a group's delay queue, ms = 2^k (16 ms up to 2^31):
//	                    quorum, x-message-ttl = ms, x-dead-letter-exchange =
//	                    P.retry, x-dead-letter-strategy = at-least-once,
//	                    x-overflow = reject-publish; bound to P.delay with
//	                    key its name
//	P.dlq               dead-letter records (quorum)
//
// Members of one group share its queues; every group gets every message
// published after its queue exists. Config.Topology declares groups' queues
// at New, so a message published before a group's first Subscribe is kept.
//
// # Messages
//
// The body is the envelope's bytes, exactly as on the other brokers.
// Properties: message_id (a fresh 32-hex id per publish, Delivery.ID),
// delivery_mode 2, content_type ContentType. Headers: HeaderTopic; on retry
// and deferred copies HeaderNotBefore (ms since the epoch) and, through a
// delay queue, CC = [the group queue's name]. Every publish waits for the
// broker's confirm (Publish, so also the outbox relay, Retry, DeadLetter,
// Defer, replay).
//
// # Consuming
//
// A subscription consumes its group's queues on one channel with manual
// acknowledgements and basic.qos = Config.Prefetch, by default the first
// Fetch's max (the consumer's fetch size). The consumer acknowledges after
// its transaction commits. Delivery.Attempt is 1 + the quorum queue's
// x-delivery-count. RabbitMQ has no per-message lease: a delivery left
// unsettled for Config.Lease is handed back (basic.nack, requeue) and comes
// again with Attempt+1; the consumer extends the lease while its handler
// runs (transport.Extender). A closed channel or connection hands back all
// its unacknowledged deliveries.
//
// # Retries: per-group delay queues of 2^k ms, exact not_before
//
// Retry publishes the retry copy (fresh message_id) to the group's delay
// queue with the longest TTL not longer than the wait until not_before, with
// CC naming the group queue; when the TTL expires the queue dead-letters it
// to P.retry, which routes it by the CC routing key to that group queue
// only. Every message in one delay queue has the same TTL, so none waits
// behind another's longer expiry (RabbitMQ expires only at a queue's head)
// and no key waits for another. A copy that arrives with time left takes
// the next shorter delay queue (same message_id: the same stored copy), so
// the hops halve the remainder; under MinDelay (16 ms) it is held in the
// subscription until due. A message is never handed out before its
// not_before, and is late by one hop's latency: measured at p99 +15 ms over
// 1,000 retries (TestRetryDelays). No plugin; the contract's exponential
// schedule with jitter is kept exactly, not rounded to tiers.
//
// # Dead letters
//
// DeadLetter publishes the dlq.Record as JSON to P.dlq, then acknowledges.
// The Transport is a dlq.Store over it: record ids are time-ordered, and
// list, show, replay and purge read the whole queue (basic.get), remove
// what they remove with basic.ack and hand back the rest; run one at a time.
// Replay sends the envelope (retry_count and not_before reset) to the
// group's queue through P.retry and stores the record again, replay count
// raised, under a new id.
//
// Retry, DeadLetter and Defer publish, then acknowledge: a crash between
// the two delivers the original again (transport.ForkingRetry).
//
// # Reconnecting
//
// A closed connection is dialled again by the next call that needs a
// channel; calls fail while the broker is down, and publishes fail at once
// while it blocks publishers (connection.blocked: a memory or disk alarm)
// or after Config.PublishTimeout without a confirm. A subscription whose
// channel closed consumes again on its next Fetch: the broker requeued
// what it held unacknowledged, so acks of those deliveries fail and they
// come again.
package rabbitmq
