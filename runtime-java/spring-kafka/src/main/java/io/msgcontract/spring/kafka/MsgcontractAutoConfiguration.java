package io.msgcontract.spring.kafka;

import io.msgcontract.kafka.KafkaConfig;
import io.msgcontract.kafka.KafkaDeliveries;
import io.msgcontract.observe.Tracing;
import io.msgcontract.support.LagObserver;
import io.msgcontract.support.Observer;
import io.opentelemetry.api.OpenTelemetry;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.listener.ConcurrentMessageListenerContainer;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.ClassUtils;

/**
 * Auto-configuration of msgcontract on Kafka for an application with a DataSource and its
 * transaction manager: {@link ContractListener} methods run in {@link ContractListenerContainers},
 * {@link ContractOutbox} writes the outbox in the caller's transaction, {@link ContractOutboxRelay}
 * sends it ({@code msgcontract.relay.enabled=true}), and {@code msgcontract.migrate=true} creates the
 * tables ({@link ContractSchema}). Settings: {@link MsgcontractProperties} ({@code msgcontract.*})
 * and Boot's {@code spring.kafka.*} (brokers, client security).
 *
 * <p>Metrics: with a Micrometer {@code MeterRegistry} bean and {@code
 * io.msgcontract:msgcontract-runtime-micrometer} on the classpath, every outcome and the consumer lag
 * go to {@code io.msgcontract.micrometer.MicrometerMetrics}. Tracing: with an {@link OpenTelemetry}
 * bean (Boot's Micrometer Tracing OpenTelemetry bridge provides one) each delivery runs in a span
 * that continues the envelope's traceparent ({@link Tracing}), so the handler's observations nest
 * under it, and the relay traces each row it publishes.
 */
@AutoConfiguration(after = {DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
    KafkaAutoConfiguration.class})
@ConditionalOnClass({KafkaDeliveries.class, ConcurrentMessageListenerContainer.class, DataSource.class})
@ConditionalOnBean({DataSource.class, PlatformTransactionManager.class})
@EnableConfigurationProperties(MsgcontractProperties.class)
public class MsgcontractAutoConfiguration {
  private static final System.Logger LOG = System.getLogger(MsgcontractAutoConfiguration.class.getName());
  static final String MICROMETER_METRICS = "io.msgcontract.micrometer.MicrometerMetrics";
  static final String METER_REGISTRY = "io.micrometer.core.instrument.MeterRegistry";

  /** Returns the auto-configuration. */
  public MsgcontractAutoConfiguration() {}

  /**
   * Collects the {@link ContractListener} methods.
   *
   * @return the post-processor
   */
  @Bean
  static ContractListenerPostProcessor msgcontractListenerPostProcessor() {
    return new ContractListenerPostProcessor();
  }

  /**
   * The deliveries' transactions on the application's DataSource and transaction manager.
   *
   * @param dataSource the DataSource
   * @param tm its transaction manager
   * @return the factory
   */
  @Bean
  @ConditionalOnMissingBean
  public SpringConnectionFactory msgcontractConnectionFactory(DataSource dataSource, PlatformTransactionManager tm) {
    return new SpringConnectionFactory(dataSource, tm);
  }

  /**
   * Creates the tables when msgcontract.migrate is true.
   *
   * @param dataSource the DataSource
   * @param props the settings
   * @return what was done
   */
  @Bean
  public ContractSchema msgcontractSchema(DataSource dataSource, MsgcontractProperties props) {
    return ContractSchema.apply(dataSource, props.isMigrate());
  }

  /**
   * The outbox of the caller's transaction; each commit that wrote to it wakes the relay, when
   * this application runs one.
   *
   * @param dataSource the DataSource
   * @param relay the relay, when msgcontract.relay.enabled is true
   * @return the outbox
   */
  @Bean
  @ConditionalOnMissingBean
  public ContractOutbox contractOutbox(DataSource dataSource, ObjectProvider<ContractOutboxRelay> relay) {
    return new ContractOutbox(dataSource, () -> relay.ifAvailable(ContractOutboxRelay::notifyCommitted));
  }

  /**
   * The listener containers of the {@link ContractListener} methods.
   *
   * @param props msgcontract.*
   * @param kafka spring.kafka.*
   * @param db the deliveries' transactions
   * @param listeners the listener methods
   * @param schema created first when msgcontract.migrate is true
   * @param otel tracing, when the application has it
   * @param beans for the optional Micrometer registry
   * @param events where the containers' events go
   * @return the containers
   */
  @Bean
  public ContractListenerContainers contractListenerContainers(MsgcontractProperties props,
      ObjectProvider<KafkaProperties> kafka, SpringConnectionFactory db, ContractListenerPostProcessor listeners,
      ContractSchema schema, ObjectProvider<OpenTelemetry> otel, BeanFactory beans, ApplicationEventPublisher events) {
    KafkaProperties k = kafka.getIfAvailable(KafkaProperties::new);
    Object metrics = micrometer(beans);
    return new ContractListenerContainers(props, k.buildConsumerProperties(), k.getBootstrapServers(),
        clientProperties(k), db, listeners::endpoints, metrics instanceof Observer o ? o : null,
        metrics instanceof LagObserver l ? l : null, otel.getIfAvailable(), events);
  }

  /**
   * The outbox relay, when msgcontract.relay.enabled is true.
   *
   * @param props msgcontract.*
   * @param kafka spring.kafka.*
   * @param dataSource the DataSource
   * @param schema created first when msgcontract.migrate is true
   * @param otel tracing, when the application has it
   * @return the relay
   */
  @Bean
  @ConditionalOnProperty(prefix = "msgcontract.relay", name = "enabled", havingValue = "true")
  public ContractOutboxRelay contractOutboxRelay(MsgcontractProperties props, ObjectProvider<KafkaProperties> kafka,
      DataSource dataSource, ContractSchema schema, ObjectProvider<OpenTelemetry> otel) {
    props.validate(false);
    KafkaProperties k = kafka.getIfAvailable(KafkaProperties::new);
    KafkaConfig cfg = new KafkaConfig();
    cfg.brokers = String.join(",", k.getBootstrapServers());
    cfg.namespace = props.getNamespace();
    cfg.registryUrl = props.getRegistryUrl();
    cfg.createTopics = props.isCreateTopics();
    cfg.partitions = props.getPartitions();
    cfg.replicationFactor = props.getReplicationFactor();
    cfg.publishTimeoutMs = props.getPublishTimeoutMs();
    cfg.connectTimeoutMs = props.getConnectTimeoutMs();
    cfg.clientProperties.putAll(clientProperties(k));
    cfg.validate();
    OpenTelemetry o = otel.getIfAvailable();
    return new ContractOutboxRelay(cfg, dataSource, props.getRelay(), o == null ? null : new Tracing(o, "kafka", ""));
  }

  /** spring.kafka.properties.* and the security protocol, which the runtime's own clients use too. */
  static Map<String, String> clientProperties(KafkaProperties k) {
    Map<String, String> p = new HashMap<>(k.getProperties());
    if (k.getSecurity().getProtocol() != null) {
      p.put("security.protocol", k.getSecurity().getProtocol());
    }
    for (String reserved : List.of("acks", "enable.idempotence", "group.id", "enable.auto.commit", "auto.offset.reset",
        "key.serializer", "value.serializer", "key.deserializer", "value.deserializer", "isolation.level",
        "partition.assignment.strategy", "group.protocol")) {
      p.remove(reserved);
    }
    return p;
  }

  /** A MicrometerMetrics on the application's MeterRegistry when both are there, else null. */
  static Object micrometer(BeanFactory beans) {
    ClassLoader cl = MsgcontractAutoConfiguration.class.getClassLoader();
    if (!ClassUtils.isPresent(METER_REGISTRY, cl) || !ClassUtils.isPresent(MICROMETER_METRICS, cl)) {
      return null;
    }
    try {
      Class<?> registryType = ClassUtils.forName(METER_REGISTRY, cl);
      Object registry = beans.getBeanProvider(registryType).getIfAvailable();
      if (registry == null) {
        return null;
      }
      return ClassUtils.forName(MICROMETER_METRICS, cl).getConstructor(registryType).newInstance(registry);
    } catch (ReflectiveOperationException | LinkageError e) {
      LOG.log(Level.WARNING, "msgcontract: " + MICROMETER_METRICS + " is on the classpath but could not be made: " + e);
      return null;
    }
  }
}
