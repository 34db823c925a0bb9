package io.msgcontract.spring.kafka;

import com.google.protobuf.Message;
import io.msgcontract.kafka.KafkaConfig;
import io.msgcontract.kafka.KafkaDeliveries;
import io.msgcontract.observe.Tracing;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.Handler;
import io.msgcontract.support.LagObserver;
import io.msgcontract.support.Observer;
import io.opentelemetry.api.OpenTelemetry;
import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import org.springframework.kafka.core.DefaultKafkaConsumerFactory;
import org.springframework.kafka.event.ConsumerStoppingEvent;
import org.springframework.kafka.event.ListenerContainerIdleEvent;
import org.springframework.kafka.listener.BatchConsumerAwareMessageListener;
import org.springframework.kafka.listener.CommonContainerStoppingErrorHandler;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.kafka.listener.ConsumerAwareRebalanceListener;
import org.springframework.kafka.listener.ContainerProperties;

/**
 * Runs the {@link ContractListener} methods: one Spring Kafka {@link
 * ConcurrentMessageListenerContainer} per consumer group, each of whose consumers feeds a {@link
 * KafkaDeliveries} of its own, the runtime's engine (per-key order, retries on the contract's
 * schedule through {@code T.retry.<group>}, dead letters on {@code T.dlq}, shared-transaction
 * batches, the committed offset at the first unsettled record), so a Spring member shares its group
 * with Go, Python and plain Java members.
 *
 * <ul>
 *   <li>The consumers' properties are Boot's {@code spring.kafka.*} consumer properties overridden
 *       by what the engine says a member must use ({@link KafkaDeliveries#consumerProperties()}),
 *       with byte-array deserializers.
 *   <li>A batch listener hands each poll's records to the engine; {@code AckMode.MANUAL}: the engine
 *       commits through the consumer and the container never acknowledges.
 *   <li>An empty poll is signalled by the container's idle event (interval 1 ms, published on the
 *       consumer thread after each empty poll of {@code msgcontract.poll-timeout-ms}), which hands the
 *       engine an empty batch, so a retry copy that became due runs at most about one poll timeout
 *       late.
 *   <li>The rebalance listener tells the engine of assigned, revoked (before the container's commit:
 *       the engine commits what is settled) and lost partitions.
 *   <li>When the engine's buffer is full the consumer's partitions are paused until it drains.
 *   <li>When a consumer stops it commits what is settled; an exception out of the engine stops the
 *       container (the records not settled are delivered again, to this member after a restart or to
 *       another; dedup keeps the effect once).
 * </ul>
 */
public class ContractListenerContainers implements SmartLifecycle {
  private static final System.Logger LOG = System.getLogger(ContractListenerContainers.class.getName());

  private final MsgcontractProperties props;
  private final Map<String, Object> springConsumerProperties;
  private final List<String> brokers;
  private final Map<String, String> clientProperties;
  private final SpringConnectionFactory db;
  private final Supplier<List<ContractListenerEndpoint>> endpoints;
  private final Observer observer;
  private final LagObserver lag;
  private final OpenTelemetry otel;
  private final ApplicationEventPublisher context;
  private final Map<String, Group> groups = new LinkedHashMap<>();
  private volatile boolean running;

  /**
   * Returns the containers of endpoints, not started.
   *
   * @param props the msgcontract.* settings
   * @param springConsumerProperties Boot's consumer properties (KafkaProperties.buildConsumerProperties())
   * @param brokers spring.kafka.bootstrap-servers
   * @param clientProperties spring.kafka.properties.*, which the engine's publisher uses too
   * @param db the transactions of deliveries
   * @param endpoints the listener methods, read at start
   * @param observer told every outcome (metrics), or null
   * @param lag told the consumer lag, or null
   * @param otel the OpenTelemetry of a span per delivery, or null for none
   * @param context where the containers' other events go
   */
  public ContractListenerContainers(MsgcontractProperties props, Map<String, Object> springConsumerProperties,
      List<String> brokers, Map<String, String> clientProperties, SpringConnectionFactory db,
      Supplier<List<ContractListenerEndpoint>> endpoints, Observer observer, LagObserver lag, OpenTelemetry otel,
      ApplicationEventPublisher context) {
    this.props = props;
    this.springConsumerProperties = springConsumerProperties;
    this.brokers = brokers;
    this.clientProperties = clientProperties;
    this.db = db;
    this.endpoints = endpoints;
    this.observer = observer;
    this.lag = lag;
    this.otel = otel;
    this.context = context;
  }

  @Override
  public synchronized void start() {
    if (running) {
      return;
    }
    List<ContractListenerEndpoint> eps = endpoints.get();
    if (eps.isEmpty()) {
      running = true;
      return;
    }
    props.validate(eps.stream().anyMatch(e -> e.group().isEmpty()));
    Map<String, List<ContractListenerEndpoint>> byGroup = new LinkedHashMap<>();
    for (ContractListenerEndpoint e : eps) {
      String g = e.group().isEmpty() ? props.getGroup() : e.group();
      byGroup.computeIfAbsent(g, k -> new ArrayList<>()).add(e);
    }
    try {
      for (Map.Entry<String, List<ContractListenerEndpoint>> e : byGroup.entrySet()) {
        Group g = new Group(e.getKey(), e.getValue());
        groups.put(e.getKey(), g);
        g.start();
      }
    } catch (RuntimeException x) {
      stopAll();
      throw x;
    }
    running = true;
  }

  @Override
  public synchronized void stop() {
    stopAll();
    running = false;
  }

  private void stopAll() {
    for (Group g : groups.values()) {
      g.stop();
    }
    groups.clear();
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  /** After the DataSource and the outbox relay's phase, before the web server. */
  @Override
  public int getPhase() {
    return SmartLifecycle.DEFAULT_PHASE - 2048;
  }

  /**
   * Returns the groups that run.
   *
   * @return their names
   */
  public synchronized Set<String> groups() {
    return Set.copyOf(groups.keySet());
  }

  /**
   * Returns what a group's engines counted, summed: handled, deduplicated, retried and
   * dead-lettered deliveries.
   *
   * @param group the group
   * @return {handled, deduplicated, retried, deadLettered}
   */
  public synchronized long[] counts(String group) {
    Group g = groups.get(group);
    long[] n = new long[4];
    if (g != null) {
      for (KafkaDeliveries d : g.all) {
        n[0] += d.handled();
        n[1] += d.deduplicated();
        n[2] += d.retried();
        n[3] += d.deadLettered();
      }
    }
    return n;
  }

  /**
   * Returns a group's container, for its metrics, its assignment or pausing it.
   *
   * @param group the group
   * @return the container, or null
   */
  public synchronized ConcurrentMessageListenerContainer<byte[], byte[]> container(String group) {
    Group g = groups.get(group);
    return g == null ? null : g.container;
  }

  private KafkaConfig config() {
    KafkaConfig c = new KafkaConfig();
    c.brokers = String.join(",", brokers);
    c.namespace = props.getNamespace();
    c.registryUrl = props.getRegistryUrl();
    c.batchSize = props.getBatchSize();
    c.maxBuffered = props.getMaxBuffered();
    c.createTopics = props.isCreateTopics();
    c.partitions = props.getPartitions();
    c.replicationFactor = props.getReplicationFactor();
    c.sessionTimeoutMs = props.getSessionTimeoutMs();
    c.commitIntervalMs = props.getCommitIntervalMs();
    c.dbRetryMs = props.getDbRetryMs();
    c.publishTimeoutMs = props.getPublishTimeoutMs();
    c.connectTimeoutMs = props.getConnectTimeoutMs();
    c.clientProperties.putAll(clientProperties);
    c.validate();
    return c;
  }

  /** One group: its container and the engines of its consumers. */
  private final class Group {
    final String name;
    final List<ContractListenerEndpoint> endpoints;
    final List<KafkaDeliveries> all = new ArrayList<>();
    final ArrayDeque<KafkaDeliveries> free = new ArrayDeque<>();
    final Map<org.apache.kafka.clients.consumer.Consumer<?, ?>, KafkaDeliveries> bound = new ConcurrentHashMap<>();
    final Set<org.apache.kafka.clients.consumer.Consumer<?, ?>> paused = ConcurrentHashMap.newKeySet();
    ConcurrentMessageListenerContainer<byte[], byte[]> container;

    Group(String name, List<ContractListenerEndpoint> endpoints) {
      this.name = name;
      this.endpoints = endpoints;
      Map<String, ContractListenerEndpoint> seen = new HashMap<>();
      for (ContractListenerEndpoint e : endpoints) {
        String k = e.spec().topic() + " " + e.spec().eventType();
        ContractListenerEndpoint was = seen.put(k, e);
        if (was != null) {
          throw new IllegalStateException("@ContractListener " + e.method() + " and " + was.method() + " both consume "
              + e.spec().eventType() + " on " + e.spec().topic() + " in group " + name
              + ": one listener per event and group");
        }
      }
    }

    void start() {
      KafkaConfig cfg = config();
      Tracing tracing = otel == null ? null : new Tracing(otel, "kafka", name);
      List<String> topics = null;
      Map<String, Object> consumerProps = null;
      for (int i = 0; i < props.getConcurrency(); i++) {
        KafkaDeliveries d = new KafkaDeliveries(cfg, name, db, System::currentTimeMillis);
        if (lag != null) {
          d.withLag(lag);
        }
        for (ContractListenerEndpoint e : endpoints) {
          register(d, e, tracing);
        }
        all.add(d);
        List<String> t = d.start();
        free.add(d);
        if (topics == null) {
          topics = t;
          consumerProps = new HashMap<>(springConsumerProperties);
          for (String k : d.consumerProperties().stringPropertyNames()) {
            consumerProps.put(k, d.consumerProperties().getProperty(k));
          }
          consumerProps.remove(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG);
          consumerProps.remove(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG);
        }
      }
      DefaultKafkaConsumerFactory<byte[], byte[]> cf =
          new DefaultKafkaConsumerFactory<>(consumerProps, new ByteArrayDeserializer(), new ByteArrayDeserializer());
      ContainerProperties cp = new ContainerProperties(topics.toArray(String[]::new));
      cp.setAckMode(ContainerProperties.AckMode.MANUAL);
      cp.setPollTimeout(props.getPollTimeoutMs());
      cp.setIdleEventInterval(1L);
      cp.setIdleBeforeDataMultiplier(1.0);
      cp.setConsumerRebalanceListener(new Rebalance());
      cp.setMessageListener((BatchConsumerAwareMessageListener<byte[], byte[]>) this::onRecords);
      container = new ConcurrentMessageListenerContainer<>(cf, cp);
      container.setConcurrency(props.getConcurrency());
      container.setBeanName("msgcontract-" + name);
      container.setCommonErrorHandler(new CommonContainerStoppingErrorHandler());
      container.setApplicationEventPublisher(this::onEvent);
      container.start();
    }

    void stop() {
      if (container != null) {
        container.stop();
      }
      for (KafkaDeliveries d : all) {
        try {
          d.close();
        } catch (RuntimeException e) {
          LOG.log(Level.WARNING, "msgcontract: closing group " + name + "'s publisher: " + e, e);
        }
      }
    }

    KafkaDeliveries engine(org.apache.kafka.clients.consumer.Consumer<?, ?> c) {
      return bound.computeIfAbsent(c, k -> {
        synchronized (free) {
          KafkaDeliveries d = free.poll();
          if (d == null) {
            throw new IllegalStateException("msgcontract: group " + name + " has more consumers than engines");
          }
          return d;
        }
      });
    }

    void onRecords(List<ConsumerRecord<byte[], byte[]>> recs, org.apache.kafka.clients.consumer.Consumer<?, ?> c) {
      KafkaDeliveries d = engine(c);
      d.polled(c, recs);
      flow(d, c);
    }

    /** Pauses the consumer's partitions while its engine's buffer is full, resumes them after. */
    void flow(KafkaDeliveries d, org.apache.kafka.clients.consumer.Consumer<?, ?> c) {
      boolean full = d.full();
      if (full && paused.add(c)) {
        for (TopicPartition tp : c.assignment()) {
          container.pausePartition(tp);
        }
      } else if (!full && paused.remove(c)) {
        for (TopicPartition tp : c.assignment()) {
          container.resumePartition(tp);
        }
      }
    }

    void onEvent(Object event) {
      if (event instanceof ListenerContainerIdleEvent idle) {
        org.apache.kafka.clients.consumer.Consumer<?, ?> c = idle.getConsumer();
        try {
          KafkaDeliveries d = engine(c);
          d.polled(c, List.of());
          flow(d, c);
        } catch (RuntimeException e) {
          LOG.log(Level.ERROR, "msgcontract: group " + name + " failed; stopping its container: " + e, e);
          container.stop(() -> {});
        }
        return;
      }
      if (event instanceof ConsumerStoppingEvent stopping) {
        org.apache.kafka.clients.consumer.Consumer<?, ?> c = stopping.getConsumer();
        KafkaDeliveries d = bound.get(c);
        if (d != null) {
          // Before the consumer closes; closing it revokes its partitions, which commits once more.
          try {
            d.commit(c);
          } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "msgcontract: group " + name + ": commit on stop: " + e, e);
          }
        }
      }
      if (event instanceof ApplicationEvent ae) {
        context.publishEvent(ae);
      } else {
        context.publishEvent(event);
      }
    }

    /** Hands the engine its consumer's partitions as the group rebalances. */
    private final class Rebalance implements ConsumerAwareRebalanceListener {
      @Override
      public void onPartitionsAssigned(org.apache.kafka.clients.consumer.Consumer<?, ?> c,
          Collection<TopicPartition> tps) {
        engine(c).assigned(tps);
      }

      @Override
      public void onPartitionsRevokedBeforeCommit(org.apache.kafka.clients.consumer.Consumer<?, ?> c,
          Collection<TopicPartition> tps) {
        engine(c).revoked(c, tps);
      }

      @Override
      public void onPartitionsLost(org.apache.kafka.clients.consumer.Consumer<?, ?> c,
          Collection<TopicPartition> tps) {
        engine(c).lost(tps);
      }
    }
  }

  private <M extends Message> void register(KafkaDeliveries d, ContractListenerEndpoint e, Tracing tracing) {
    @SuppressWarnings("unchecked")
    EventSpec<M> spec = (EventSpec<M>) e.spec();
    Handler<Message> h = e.handler();
    Handler<M> typed = h::handle;
    Consumer<M> c = new Consumer<>(spec, e.handlerName(), typed);
    if (observer != null) {
      c = c.withObserver(observer);
    }
    if (tracing != null) {
      c = c.withTracer(tracing);
    }
    d.register(spec, e.handlerName(), c);
  }
}
