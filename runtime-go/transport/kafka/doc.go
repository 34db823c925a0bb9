// Package kafka is the Apache Kafka transport, on franz-go.
//
// # Topics
//
// Under Config.Namespace, a topic T uses:
//
//	T                 the events; record key = biz_key, value = the envelope
//	T.retry.<group>   retry copies of T's events for one consumer group
//	T.dlq             dead letters: value = the delivered bytes, untouched;
//	                  header msgcontract.dlq = the dlq.Record metadata (JSON)
//	T.dlq.ops         replay and purge markers (compacted, key = record id)
//
// The transport creates missing topics (Config.CreateTopics) with
// Config.Partitions partitions; with creation off it fails with an error
// naming the topic. A cluster that refuses connections (down, or being
// restarted) is asked again every quarter second until
// Config.ConnectTimeout, then the error names the brokers.
//
// # Publishing
//
// The producer is idempotent with acks=all and partitions by the murmur2
// hash of the key, as the Java client does, so one biz_key's events land
// in one partition in publish order, whichever language produced them.
// A topic just created may be named in the broker's metadata before the
// broker hosts its partitions; a record keeps trying through that
// (UNKNOWN_TOPIC_OR_PARTITION) until Config.PublishTimeout.
//
// # Consuming
//
// A subscription is a consumer-group member reading T and T.retry.<group>.
// It hands a key's records out one at a time in offset order while other
// keys go on in parallel, and it settles out of order: a partition's
// committed offset is its first record whose outcome is not durable yet
// (handled, deduplicated, retry published, or dead-letter written, each
// acknowledged by the broker or the database before the record counts as
// settled). Commits run every Config.CommitInterval, right after a retry
// or a dead letter (rare, and costly to re-run), on revoke and on Close.
// When a rebalance revokes a partition, the subscription stops handing out
// its records, waits up to Config.RevokeWait for the ones in flight,
// commits the settled prefix and lets go; a lost partition (fenced member)
// is let go without a commit.
//
// # Lease and ack wait
//
// Kafka has no per-message lease. Inside a process, a delivery left
// unsettled for Config.Lease is handed to another worker (Attempt+1); the
// consumer extends the lease while its handler runs. Across processes the
// lease is the group session: a member that dies loses its partitions
// after Config.SessionTimeout, and the next owner resumes at the
// committed offset, so records settled after the first unsettled one come
// again and the dedup claims absorb them. Attempt counts deliveries within
// one process only; retry_count in the envelope is what survives.
//
// # Retries: one retry topic per group, exact not_before
//
// A retryable failure publishes the retry copy (retry_count+1,
// not_before = now + backoff) to T.retry.<group> and settles the original,
// so the partition goes on at once. A retry copy that is not due yet is
// deferred in memory: its offset stays uncommitted and its key waits, but
// no partition is paused and no other key waits for it.
//
// Spring Kafka uses one retry topic per delay tier because its container
// commits in order and pauses a partition until its head is due; a tier
// must then hold a single delay, and the contract's exponential backoff
// with jitter would be rounded to the tiers. This subscription commits the
// settled prefix instead, so a single retry topic keeps the contract's
// delays exactly and needs no tier list per contract. A retry store in the
// business database was the other option; it needs a poller and a table in
// every service, and takes retries off the broker where operators and the
// other groups' tooling see them. The price of one topic: after a crash
// the retry topic is re-read from its oldest pending retry (at most
// max_delay of retry traffic, absorbed by the claims), and pending retries
// count against Config.MaxBuffered; keep it above retry rate × max_delay.
//
// # Dead letters
//
// The Transport is a dlq.Store over T.dlq. Record ids are
// "T/<partition>/<offset>". Replay publishes the envelope, retry_count and
// not_before reset, to T.retry.<group>, so only the group that gave up on
// it sees it again. Replay and purge never rewrite T.dlq: they write the
// record's new state (replay count, purged) to the compacted T.dlq.ops,
// which List folds in; purged records are hidden at once and leave T.dlq
// when its retention (Config.DLQRetention) expires. A message dead-lettered
// again after a crash (its offset was not committed yet) is written again;
// List shows its first copy only, whose state stands for the copies.
//
// # Confluent wire format
//
// With Config.Confluent, event records (topic T only) are written as
// Confluent's Protobuf serializers write them, so any Confluent consumer
// reads them: value = magic 0, schema id, message-index array, then the
// envelope's payload; header msgcontract.envelope = the envelope without
// its payload. The schema id is the registry's id of the envelope's
// schema_subject (else "<topic>-value") at its schema_version (else the
// latest), cached; the message index comes from the payload message's
// descriptor, found among the linked-in messages by its
// (msgcontract.v1.event) option. A subscription joins header and payload
// back into the envelope after checking that the id belongs to that
// subject; a record that fails the check is dead-lettered with
// dlq.ReasonSchema, and one the registry cannot be asked about waits a
// second. An envelope that names no schema_subject or schema_version (a
// generated producer's names no version) is given the subject and the
// version the id is registered as, from the same answer, so handlers and
// dead letters name the schema the payload was written with; a version
// the producer named is kept. Retry and dead-letter records stay plain
// envelopes.
//
// # Metrics
//
// The consumer's metrics are the same as on every transport; with
// Config.Registerer the subscription also sets
// msgcontract_consumer_lag_messages{group,topic,partition} after each fetch,
// and Transport.Backlog reports the group's uncommitted records as the
// broker sees them.
package kafka
