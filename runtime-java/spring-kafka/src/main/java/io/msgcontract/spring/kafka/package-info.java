/**
 * A Spring Boot starter for msgcontract on Kafka: {@link io.msgcontract.spring.kafka.ContractListener}
 * methods consume contract events in Spring-managed transactions on the application's DataSource
 * (dedup claim, business writes and decision in one), with the Kafka runtime's retries, dead
 * letters and offsets, in a group shared with Go, Python and plain Java members; {@link
 * io.msgcontract.spring.kafka.ContractOutbox} writes events in the caller's transaction and {@link
 * io.msgcontract.spring.kafka.ContractOutboxRelay} sends them. See docs/spring-kafka.md.
 */
package io.msgcontract.spring.kafka;
