package io.msgcontract.spring.kafka;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The starter's settings, {@code msgcontract.*} in application.yaml. The brokers and client
 * settings (security and the like) are Spring Boot's {@code spring.kafka.*}; what a group member
 * must agree on with Go, Python and plain Java members (group.id, offsets, assignor, session) is
 * the runtime's and cannot be set here.
 *
 * <pre>{@code
 * msgcontract:
 *   group: billing          # consumer group of the @ContractListener methods
 *   namespace: prod.        # topic and group prefix, as the Go and Python services use
 *   migrate: true           # create msg_dedup, msg_dedup_chain and the outbox tables at start-up
 *   relay:
 *     enabled: true         # publish the outbox's rows
 * }</pre>
 *
 * <p>{@link #validate} runs at start-up and names each property that is wrong.
 */
@ConfigurationProperties(prefix = "msgcontract")
public class MsgcontractProperties {
  /** The consumer group of listeners that name none. */
  private String group = "";
  /** Prefix of topics and groups (ASCII letters, digits, '.', '_', '-'), as the other services of the system use. */
  private String namespace = "";
  /** Schema registry URL for the Confluent wire format; empty: plain envelopes only. */
  private String registryUrl = "";
  /** Deliveries sharing one transaction (1: a transaction per delivery). */
  private int batchSize = 64;
  /** Records buffered per consumer before fetching pauses. */
  private int maxBuffered = 20_000;
  /** Consumers (threads, each with its own engine) per group. */
  private int concurrency = 1;
  /** Create the topics a group needs at start-up. */
  private boolean createTopics = true;
  /** Partitions of topics created. */
  private int partitions = 6;
  /** Replication factor of topics created; -1 is the broker's default. */
  private short replicationFactor = -1;
  /** The group session timeout, ms. */
  private int sessionTimeoutMs = 10_000;
  /** How often settled offsets are committed, ms. */
  private long commitIntervalMs = 200;
  /** How long a delivery waits after the database failed, ms. */
  private long dbRetryMs = 500;
  /** How long a retry copy, dead letter or outbox row may take to be acknowledged, ms. */
  private long publishTimeoutMs = 30_000;
  /** The broker connection's timeout, ms. */
  private long connectTimeoutMs = 10_000;
  /**
   * How long a poll waits for records, ms; with no record the container signals idle this often, and
   * due retry copies run then: it bounds how late a retry runs after its not_before.
   */
  private long pollTimeoutMs = 10;
  /** Create the dedup, retry chain and outbox tables (IF NOT EXISTS) on the DataSource at start-up. */
  private boolean migrate = false;
  /** The outbox relay. */
  private final Relay relay = new Relay();

  /** Returns defaults. */
  public MsgcontractProperties() {}

  /** The outbox relay's settings, {@code msgcontract.relay.*}. */
  public static class Relay {
    /** Run the relay in this application. */
    private boolean enabled = false;
    /** Longest time between passes when the outbox was empty and nothing woke the relay (a commit through ContractOutbox, or on PostgreSQL any commit to the outbox), ms. */
    private long intervalMs = 200;
    /** Rows per pass. */
    private int batchSize = 100;
    /** How long the leader lock lasts without a pass, ms. */
    private long leaseMs = 10_000;

    /** Returns defaults. */
    public Relay() {}

    /** @return whether the relay runs */
    public boolean isEnabled() {
      return enabled;
    }

    /** @param enabled whether the relay runs */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /** @return ms between passes */
    public long getIntervalMs() {
      return intervalMs;
    }

    /** @param intervalMs ms between passes */
    public void setIntervalMs(long intervalMs) {
      this.intervalMs = intervalMs;
    }

    /** @return rows per pass */
    public int getBatchSize() {
      return batchSize;
    }

    /** @param batchSize rows per pass */
    public void setBatchSize(int batchSize) {
      this.batchSize = batchSize;
    }

    /** @return the lease, ms */
    public long getLeaseMs() {
      return leaseMs;
    }

    /** @param leaseMs the lease, ms */
    public void setLeaseMs(long leaseMs) {
      this.leaseMs = leaseMs;
    }
  }

  /**
   * Returns every problem with these settings, each naming its property and what to do; empty when
   * they are fine.
   *
   * @param groupNeeded whether a listener takes its group from msgcontract.group
   * @return the problems
   */
  public List<String> problems(boolean groupNeeded) {
    List<String> errs = new ArrayList<>();
    if (groupNeeded && (group == null || group.isBlank())) {
      errs.add("msgcontract.group is not set: set it to the consumer group of the @ContractListener methods "
          + "(or name one in @ContractListener(group = ...))");
    } else if (group != null && !group.isEmpty() && !legal(group)) {
      errs.add("msgcontract.group \"" + group + "\" may only hold ASCII letters, digits, '.', '_' and '-'");
    }
    if (namespace == null || (!namespace.isEmpty() && !legal(namespace))) {
      errs.add("msgcontract.namespace \"" + namespace + "\" may only hold ASCII letters, digits, '.', '_' and '-' "
          + "(for example prod.)");
    }
    if (registryUrl == null || (!registryUrl.isEmpty() && !httpUrl(registryUrl))) {
      errs.add("msgcontract.registry-url \"" + registryUrl + "\" is not an http(s) URL with a host: set the schema "
          + "registry's URL, or leave it empty for plain envelopes");
    }
    positive(errs, "batch-size", batchSize, "1 gives each delivery a transaction of its own");
    positive(errs, "max-buffered", maxBuffered, "records buffered per consumer before fetching pauses");
    positive(errs, "concurrency", concurrency, "consumers per group");
    positive(errs, "partitions", partitions, "partitions of the topics created");
    positive(errs, "session-timeout-ms", sessionTimeoutMs, "");
    positive(errs, "commit-interval-ms", commitIntervalMs, "");
    positive(errs, "db-retry-ms", dbRetryMs, "");
    positive(errs, "publish-timeout-ms", publishTimeoutMs, "");
    positive(errs, "connect-timeout-ms", connectTimeoutMs, "");
    positive(errs, "poll-timeout-ms", pollTimeoutMs, "it bounds how late a due retry runs; 10 is the default");
    positive(errs, "relay.interval-ms", relay.intervalMs, "ms between the relay's passes");
    positive(errs, "relay.batch-size", relay.batchSize, "rows per relay pass");
    positive(errs, "relay.lease-ms", relay.leaseMs, "");
    return errs;
  }

  /**
   * Throws when {@link #problems} finds any.
   *
   * @param groupNeeded whether a listener takes its group from msgcontract.group
   * @throws IllegalStateException listing every problem
   */
  public void validate(boolean groupNeeded) {
    List<String> errs = problems(groupNeeded);
    if (!errs.isEmpty()) {
      throw new IllegalStateException("invalid msgcontract settings: " + String.join("; ", errs));
    }
  }

  private static void positive(List<String> errs, String name, long v, String hint) {
    if (v <= 0) {
      errs.add("msgcontract." + name + " is " + v + ": it must be at least 1" + (hint.isEmpty() ? "" : " (" + hint + ")"));
    }
  }

  private static boolean legal(String s) {
    return s.chars().allMatch(c -> c < 128 && (Character.isLetterOrDigit(c) || c == '.' || c == '_' || c == '-'));
  }

  private static boolean httpUrl(String u) {
    try {
      URI x = new URI(u);
      return ("http".equals(x.getScheme()) || "https".equals(x.getScheme())) && x.getHost() != null;
    } catch (URISyntaxException e) {
      return false;
    }
  }

  // Accessors for Boot's binder.

  /** @return the group */
  public String getGroup() {
    return group;
  }

  /** @param group the group */
  public void setGroup(String group) {
    this.group = group;
  }

  /** @return the namespace */
  public String getNamespace() {
    return namespace;
  }

  /** @param namespace the namespace */
  public void setNamespace(String namespace) {
    this.namespace = namespace;
  }

  /** @return the registry URL */
  public String getRegistryUrl() {
    return registryUrl;
  }

  /** @param registryUrl the registry URL */
  public void setRegistryUrl(String registryUrl) {
    this.registryUrl = registryUrl;
  }

  /** @return the batch size */
  public int getBatchSize() {
    return batchSize;
  }

  /** @param batchSize the batch size */
  public void setBatchSize(int batchSize) {
    this.batchSize = batchSize;
  }

  /** @return records buffered before fetching pauses */
  public int getMaxBuffered() {
    return maxBuffered;
  }

  /** @param maxBuffered records buffered before fetching pauses */
  public void setMaxBuffered(int maxBuffered) {
    this.maxBuffered = maxBuffered;
  }

  /** @return consumers per group */
  public int getConcurrency() {
    return concurrency;
  }

  /** @param concurrency consumers per group */
  public void setConcurrency(int concurrency) {
    this.concurrency = concurrency;
  }

  /** @return whether topics are created */
  public boolean isCreateTopics() {
    return createTopics;
  }

  /** @param createTopics whether topics are created */
  public void setCreateTopics(boolean createTopics) {
    this.createTopics = createTopics;
  }

  /** @return partitions of topics created */
  public int getPartitions() {
    return partitions;
  }

  /** @param partitions partitions of topics created */
  public void setPartitions(int partitions) {
    this.partitions = partitions;
  }

  /** @return the replication factor */
  public short getReplicationFactor() {
    return replicationFactor;
  }

  /** @param replicationFactor the replication factor */
  public void setReplicationFactor(short replicationFactor) {
    this.replicationFactor = replicationFactor;
  }

  /** @return the session timeout, ms */
  public int getSessionTimeoutMs() {
    return sessionTimeoutMs;
  }

  /** @param sessionTimeoutMs the session timeout, ms */
  public void setSessionTimeoutMs(int sessionTimeoutMs) {
    this.sessionTimeoutMs = sessionTimeoutMs;
  }

  /** @return the commit interval, ms */
  public long getCommitIntervalMs() {
    return commitIntervalMs;
  }

  /** @param commitIntervalMs the commit interval, ms */
  public void setCommitIntervalMs(long commitIntervalMs) {
    this.commitIntervalMs = commitIntervalMs;
  }

  /** @return the database retry wait, ms */
  public long getDbRetryMs() {
    return dbRetryMs;
  }

  /** @param dbRetryMs the database retry wait, ms */
  public void setDbRetryMs(long dbRetryMs) {
    this.dbRetryMs = dbRetryMs;
  }

  /** @return the publish timeout, ms */
  public long getPublishTimeoutMs() {
    return publishTimeoutMs;
  }

  /** @param publishTimeoutMs the publish timeout, ms */
  public void setPublishTimeoutMs(long publishTimeoutMs) {
    this.publishTimeoutMs = publishTimeoutMs;
  }

  /** @return the connect timeout, ms */
  public long getConnectTimeoutMs() {
    return connectTimeoutMs;
  }

  /** @param connectTimeoutMs the connect timeout, ms */
  public void setConnectTimeoutMs(long connectTimeoutMs) {
    this.connectTimeoutMs = connectTimeoutMs;
  }

  /** @return the poll timeout, ms */
  public long getPollTimeoutMs() {
    return pollTimeoutMs;
  }

  /** @param pollTimeoutMs the poll timeout, ms */
  public void setPollTimeoutMs(long pollTimeoutMs) {
    this.pollTimeoutMs = pollTimeoutMs;
  }

  /** @return whether tables are created at start-up */
  public boolean isMigrate() {
    return migrate;
  }

  /** @param migrate whether tables are created at start-up */
  public void setMigrate(boolean migrate) {
    this.migrate = migrate;
  }

  /** @return the relay's settings */
  public Relay getRelay() {
    return relay;
  }
}
