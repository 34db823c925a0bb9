// Package rocketmq is the Apache RocketMQ transport, on RocketMQ's Go
// client (github.com/apache/rocketmq-client-go/v2, the remoting protocol:
// it talks to the name server and the brokers, no proxy).
//
// # Names
//
// RocketMQ names hold ASCII letters, digits, '_' and '-'; any other
// character of a msgcontract topic or group ('.' most often) becomes '_'.
// Under Config.Namespace:
//
//	T                    the events of topic T
//	<group>_retry        retry and deferred copies for one consumer group
//	msgcontract_dlq      dead-letter records (one queue: storage order)
//	msgcontract_dlq_ops  replay and purge markers of those records
//	<group>              the consumer group
//
// Every message carries user properties naming its msgcontract topic
// (MSGCONTRACT_TOPIC, so a copy in a retry topic knows its origin) and,
// on retry and deferred copies, the time before which it must not be
// handled (MSGCONTRACT_NOT_BEFORE, Unix milliseconds). Keys are the
// biz_key and the message id (the broker indexes them: mqadmin
// queryMsgByKey finds a payment's messages); the tag is the event type;
// the sharding key is the biz_key, so one key's events land in one queue
// in publish order. The body is the envelope, exactly as on every other
// transport.
//
// The transport creates missing topics on Config.Brokers when
// Config.CreateTopics is on (the default when brokers are given);
// otherwise topics must exist (mqadmin updateTopic).
//
// # Consuming
//
// A subscription is a clustering push consumer of T and <group>_retry. A
// message is handed out by Fetch and held until it is settled: Ack,
// Retry, DeadLetter and Defer report CONSUME_SUCCESS to the client (which
// commits the queue's offset in order, every few seconds); a lease that
// expires unsettled reports RECONSUME_LATER at delay level 1, so the
// broker redelivers it a second later through the group's %RETRY% topic
// with its reconsume count raised (Delivery.Attempt = reconsume count +
// 1). After the group's maximum reconsume count (16 by default) the broker
// moves it to %DLQ%<group>: DrainBrokerDLQ turns those into msgcontract
// dead-letter records. A process that dies holding messages leaves their
// offsets uncommitted; the queue's next owner delivers them again, and
// the consumer's dedup claims absorb what had been handled.
//
// # Retries on the contract's schedule
//
// RocketMQ's own retries follow fixed delay levels. msgcontract's retry
// copy (retry_count+1, not_before = now + backoff) is published instead
// to <group>_retry as a RocketMQ 5 timer message (TIMER_DELIVER_MS) due
// Config.TimerLead before not_before, and the subscription holds it in
// memory until not_before: the broker's timer wheel fires late by tens of
// milliseconds, the hold does not. The original is settled once the copy
// is stored, so a crash in between delivers the original again: the
// retry chain may fork (transport.ForkingRetry), which the consumer
// resolves in the business database.
//
// # Transactional messages
//
// TxProducer is the outbox's alternative on RocketMQ: Send stores the
// event as a half message, runs the business transaction with a row in
// txcheck.Table, and commits the message when that transaction commits;
// the broker's check-back, for a verdict lost to a crash, is answered from
// the row (package txcheck). Its topics are TRANSACTION topics.
package rocketmq
