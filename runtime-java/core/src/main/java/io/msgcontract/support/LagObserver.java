package io.msgcontract.support;

/**
 * Sees a transport's consumer lag, where the transport has offsets (Kafka): the records of a
 * partition behind its end after the member's last fetch. {@code io.msgcontract.observe.PrometheusMetrics}
 * implements it as {@code msgcontract_consumer_lag_messages{group,topic,partition}}, the gauge
 * runtime-go's Kafka transport and the Python runtime expose (docs/DESIGN.md, "Observability").
 */
public interface LagObserver {

  /** An observer that does nothing, the default. */
  LagObserver NONE = new LagObserver() {
    @Override
    public void lag(String group, String topic, int partition, long records) { }

    @Override
    public void forget(String group, String topic, int partition) { }
  };

  /**
   * Called after a fetch returned records of the partition.
   *
   * @param group the consumer group as the service names it (without a namespace)
   * @param topic the broker's topic name (with its namespace, retry topics included)
   * @param partition the partition
   * @param records the partition's end offset minus the offset after the last record fetched, at least 0
   */
  void lag(String group, String topic, int partition, long records);

  /**
   * Called when the member lets the partition go: its next owner reports it.
   *
   * @param group the consumer group
   * @param topic the broker's topic name
   * @param partition the partition
   */
  void forget(String group, String topic, int partition);
}
