package io.msgcontract.kafka;

import com.google.protobuf.Message;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Handler;
import io.msgcontract.support.LagObserver;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * A consumer-group member that runs generated consumers ({@link Consumer}) on
 * Kafka with the decisions of runtime-go's kafka transport, so Go, Python and
 * Java members can share one group: a KafkaConsumer of its own, polled in a
 * loop that feeds {@link KafkaDeliveries}, whose class comment says what
 * becomes of each record (per-key order, retry copies on
 * T.retry.&lt;group&gt;, dead letters on T.dlq, retry chains, shared
 * transactions, the committed offset).
 *
 * <p>{@link #run()} blocks in the calling thread, which runs the handlers;
 * {@link #close()} from another thread stops it. Not thread-safe otherwise.
 */
public final class KafkaConsumerLoop implements AutoCloseable {
  /** The code of a message with no handler for its event type, as in the Go runtime. */
  public static final int CODE_NO_HANDLER = KafkaDeliveries.CODE_NO_HANDLER;
  /** The code of a framed record the schema registry check turned down, as in the Go runtime. */
  public static final int CODE_SCHEMA = KafkaDeliveries.CODE_SCHEMA;

  private final KafkaDeliveries deliveries;
  private volatile boolean closed;
  private volatile KafkaConsumer<byte[], byte[]> consumer;

  /**
   * Tests only: asked with a delivery's id once its retry copy is published,
   * before the delivery is settled. True acts out a crash in between: the
   * delivery is neither settled nor committed and runs again, as a crashed
   * member's record is delivered again to the partition's next owner.
   */
  java.util.function.Predicate<String> crashAfterRetry = id -> false;

  /**
   * Returns a loop of group's member.
   *
   * @param cfg the cluster; validated here
   * @param group the consumer group (dedup is per handler, the group names offsets and retry topics)
   * @param db opens a connection per delivery
   */
  public KafkaConsumerLoop(KafkaConfig cfg, String group, ConnectionFactory db) {
    this(cfg, group, db, System::currentTimeMillis);
  }

  /** Like {@link #KafkaConsumerLoop(KafkaConfig, String, ConnectionFactory)} with a clock (UTC epoch ms). */
  public KafkaConsumerLoop(KafkaConfig cfg, String group, ConnectionFactory db, LongSupplier clock) {
    this.deliveries = new KafkaDeliveries(cfg, group, db, clock);
  }

  /**
   * Registers handler for spec's event under handlerName, the dedup key's
   * second half: keep it stable across deploys and equal to the Go or
   * Python handler it shares a group and database with.
   */
  public <M extends Message> KafkaConsumerLoop register(EventSpec<M> spec, String handlerName, Handler<M> handler) {
    return register(spec, handlerName, new Consumer<>(spec, handlerName, handler));
  }

  /** Registers a consumer built by the caller (a clock or jitter source of its own); one per topic and event type. */
  public <M extends Message> KafkaConsumerLoop register(EventSpec<M> spec, String handlerName, Consumer<M> c) {
    if (consumer != null) {
      throw new IllegalStateException("kafka: register before run");
    }
    deliveries.register(spec, handlerName, c);
    return this;
  }

  /**
   * Reports consumer lag to lag, for example an {@code io.msgcontract.observe.PrometheusMetrics};
   * the default reports nothing.
   */
  public KafkaConsumerLoop withLag(LagObserver lag) {
    if (consumer != null) {
      throw new IllegalStateException("kafka: withLag before run");
    }
    deliveries.withLag(lag);
    return this;
  }

  /** Deliveries whose handler committed. */
  public long handled() {
    return deliveries.handled();
  }

  /** Deliveries acknowledged as duplicates. */
  public long deduplicated() {
    return deliveries.deduplicated();
  }

  /** Retry copies published. */
  public long retried() {
    return deliveries.retried();
  }

  /** Dead letters written. */
  public long deadLettered() {
    return deliveries.deadLettered();
  }

  /** Stops {@link #run()}: what is settled is committed and the member leaves the group. */
  @Override
  public void close() {
    closed = true;
    deliveries.stop();
    KafkaConsumer<byte[], byte[]> c = consumer;
    if (c != null) {
      c.wakeup();
    }
  }

  /**
   * Joins the group and consumes until {@link #close()}. Creates the topics
   * it needs (T, T.retry.&lt;group&gt;, T.dlq, T.dlq.ops) when createTopics is on.
   *
   * @throws KafkaRuntimeException when the cluster is unreachable or a topic is missing
   */
  public void run() {
    deliveries.crashAfterRetry = crashAfterRetry;
    List<String> names = deliveries.start();
    try (KafkaDeliveries d = deliveries;
        KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(d.consumerProperties(),
            new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      consumer = c;
      if (closed) {
        return;
      }
      c.subscribe(names, new Listener(c));
      try {
        while (!closed) {
          d.polled(c, c.poll(Duration.ofMillis(d.pollWaitMs())));
          if (d.full()) {
            c.pause(c.assignment());
          } else if (!c.paused().isEmpty()) {
            c.resume(c.paused());
          }
        }
      } catch (WakeupException e) {
        // close() asked to stop
      }
      d.commit(c);
    }
  }

  /** Runs inside poll, in the loop's thread: no handler is running. */
  private final class Listener implements ConsumerRebalanceListener {
    private final KafkaConsumer<byte[], byte[]> c;

    Listener(KafkaConsumer<byte[], byte[]> c) {
      this.c = c;
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> tps) {
      deliveries.assigned(tps);
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> tps) {
      deliveries.revoked(c, tps);
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> tps) {
      deliveries.lost(tps);
    }
  }
}
