package io.msgcontract.spring.kafka;

import io.msgcontract.kafka.KafkaConfig;
import io.msgcontract.kafka.KafkaPublisher;
import io.msgcontract.kafka.OutboxRelay;
import io.msgcontract.observe.Tracing;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the Kafka outbox relay ({@link OutboxRelay}: rows in id order, one relay at a time under the
 * leader lock, at least once) in a thread of its own while the application runs: a pass at once
 * after a full batch, else when woken, or {@code msgcontract.relay.interval-ms} after an empty or
 * failed one at the latest. It wakes when a transaction of this application that wrote through
 * {@link ContractOutbox} commits ({@link #notifyCommitted}) and, on PostgreSQL, when a producer in
 * another process sends a NOTIFY after its commit through an {@link
 * io.msgcontract.support.OutboxNotifier} (LISTEN on a connection of its own). Its connections are
 * the DataSource's own, outside Spring's transactions.
 */
public class ContractOutboxRelay implements SmartLifecycle {
  private final KafkaConfig cfg;
  private final DataSource dataSource;
  private final MsgcontractProperties.Relay settings;
  private final Tracing tracing;
  private final AtomicLong published = new AtomicLong();
  private volatile boolean running;
  private Thread thread;
  private KafkaPublisher publisher;
  private volatile OutboxRelay relay;

  /**
   * Returns a relay, not started.
   *
   * @param cfg the cluster and namespace
   * @param dataSource the database holding msg_outbox
   * @param settings msgcontract.relay.*
   * @param tracing a producer span per row, or null
   */
  public ContractOutboxRelay(KafkaConfig cfg, DataSource dataSource, MsgcontractProperties.Relay settings,
      Tracing tracing) {
    this.cfg = cfg;
    this.dataSource = dataSource;
    this.settings = settings;
    this.tracing = tracing;
  }

  @Override
  public synchronized void start() {
    if (running) {
      return;
    }
    publisher = new KafkaPublisher(cfg);
    OutboxRelay relay =
        new OutboxRelay(dataSource::getConnection, publisher, settings.getLeaseMs(), settings.getBatchSize(), tracing);
    this.relay = relay;
    running = true;
    thread = new Thread(() -> loop(relay), "msgcontract-outbox-relay");
    thread.setDaemon(true);
    thread.start();
  }

  private void loop(OutboxRelay relay) {
    try {
      relay.run(settings.getIntervalMs(), n -> published.addAndGet(n));
    } catch (InterruptedException e) {
      // stop()
    }
  }

  /**
   * Wakes the relay at once: a transaction that wrote to the outbox has committed. {@link
   * ContractOutbox} calls it after each such commit of this application; on PostgreSQL an
   * application without a relay of its own wakes it through an {@link
   * io.msgcontract.support.OutboxNotifier}.
   */
  public void notifyCommitted() {
    OutboxRelay r = relay;
    if (r != null) {
      r.notifyCommitted();
    }
  }

  @Override
  public synchronized void stop() {
    if (!running) {
      return;
    }
    running = false;
    thread.interrupt();
    try {
      thread.join(cfg.publishTimeoutMs + 5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    publisher.close();
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  /** Before the listener containers start, after they stop. */
  @Override
  public int getPhase() {
    return SmartLifecycle.DEFAULT_PHASE - 4096;
  }

  /**
   * Returns how many rows this relay published.
   *
   * @return the count
   */
  public long published() {
    return published.get();
  }
}
