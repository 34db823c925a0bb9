package io.msgcontract.spring.kafka;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a bean method as the consumer of one contract event on Kafka. The method receives the
 * decoded event inside the delivery's transaction, which also holds the dedup claim; its
 * signature is one of
 *
 * <pre>{@code
 * void on(PaySuccess msg)
 * void on(PaySuccess msg, Envelope env)
 * void on(Connection tx, PaySuccess msg, Envelope env)
 * }</pre>
 *
 * <p>with {@code io.msgcontract.v1.Envelope} and {@code java.sql.Connection} (the transaction's
 * connection; a {@code JdbcTemplate} or {@code @Transactional} code on the same DataSource joins
 * the same transaction). Throw a {@code io.msgcontract.support.ContractException} to report a
 * contract error code; any other exception is unclassified (the contract says whether that is
 * retried).
 *
 * <p>The event's contract, its {@code EventSpec}, is found at start-up:
 *
 * <ul>
 *   <li>{@link #spec()} names the generated event class that holds it as a static field {@code
 *       SPEC}, for example {@code PaymentContract.PaySuccess.class}.
 *   <li>Left out, it is looked up from the message class (the method's message parameter): the
 *       contract class the generator writes beside it ({@code <File>Contract.<Message>.SPEC} in
 *       the message's package). The spec found must be of that message class.
 * </ul>
 *
 * <p>A spec that cannot be found, a signature that does not fit, or two listeners of one event in
 * a group fail the application's start-up with a message that names the method.
 *
 * <pre>{@code
 * @ContractListener(spec = PaymentContract.PaySuccess.class, handler = "record-payment")
 * void onPaid(PaySuccess msg, Envelope env) { jdbc.update("INSERT INTO payments ...", ...); }
 * }</pre>
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface ContractListener {
  /**
   * The handler's name, the dedup key's second half: keep it stable across deploys, and equal to
   * the Go or Python handler's when they share a database.
   *
   * @return the handler name
   */
  String handler();

  /**
   * The generated event class holding the static {@code EventSpec} field {@code SPEC} (for example
   * {@code PaymentContract.PaySuccess.class}); {@code void.class}, the default, looks it up from
   * the message class.
   *
   * @return the class holding SPEC
   */
  Class<?> spec() default void.class;

  /**
   * The consumer group; empty, the default, is {@code msgcontract.group}.
   *
   * @return the group
   */
  String group() default "";
}
