package io.msgcontract.rabbitmq;

import com.rabbitmq.client.AlreadyClosedException;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import io.msgcontract.support.DeadLetterRecord;
import io.msgcontract.support.DecodeException;
import io.msgcontract.support.Envelopes;
import io.msgcontract.v1.Envelope;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeoutException;

/**
 * The dead-letter queue P.dlq as a store, with the algorithm of
 * docs/rabbitmq.md ("Dead letters") that runtime-go's store and {@code
 * msgcontract dlq --rabbitmq} follow: read the whole queue with basic.get (no
 * auto-ack) until it reports empty, sort by id, act, basic.ack the records
 * removed, then basic.nack(multiple, requeue) the rest, so a crash hands them
 * all back. Two scans at once would each see the other's records missing:
 * run one at a time. Not thread-safe.
 */
public final class RabbitDeadLetters {
  /** At most this many records are listed when the filter sets no limit (runtime-go's dlq.DefaultLimit). */
  public static final int DEFAULT_LIMIT = 100;

  private final RabbitPublisher pub;

  /**
   * Selects records; an empty or null field matches everything.
   *
   * @param topic the record's topic
   * @param group the record's group
   * @param handler the record's handler
   * @param eventType the record's event type
   * @param bizKey the record's biz_key
   * @param reason the record's reason
   * @param limit how many {@link #list} returns at most; 0 for {@link #DEFAULT_LIMIT}
   */
  public record Filter(String topic, String group, String handler, String eventType, String bizKey, String reason,
      int limit) {
    /** A filter matching every record. */
    public static final Filter ALL = new Filter(null, null, null, null, null, null, 0);

    /** True when r matches every field set. */
    public boolean matches(DeadLetterRecord r) {
      return eq(topic, r.topic()) && eq(group, r.group()) && eq(handler, r.handler())
          && eq(eventType, r.eventType()) && eq(bizKey, r.bizKey()) && eq(reason, r.reason());
    }

    private static boolean eq(String want, String got) {
      return want == null || want.isEmpty() || want.equals(got);
    }
  }

  /** Thrown when no record has the id asked for. */
  public static final class NotFoundException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotFoundException(String message) {
      super(message);
    }
  }

  private record Stored(DeadLetterRecord rec, long tag) {}

  /** Acknowledges (removes) records of a scan and remembers which. */
  private static final class Acks {
    final Channel ch;
    final java.util.Set<Long> acked = new java.util.HashSet<>();

    Acks(Channel ch) {
      this.ch = ch;
    }

    void ack(long tag) throws IOException {
      ch.basicAck(tag, false);
      acked.add(tag);
    }
  }

  @FunctionalInterface
  private interface Action {
    void run(Acks ch, List<Stored> recs) throws IOException;
  }

  /**
   * Returns the store of pub's prefix; it publishes replays and stored records through pub.
   *
   * @param pub the publisher (its connection and prefix)
   */
  public RabbitDeadLetters(RabbitPublisher pub) {
    this.pub = pub;
  }

  private void scan(Action fn) {
    String dlq = pub.topology().dlq();
    Channel ch = pub.newChannel();
    try {
      List<Stored> recs = new ArrayList<>();
      while (true) {
        GetResponse m = ch.basicGet(dlq, false);
        if (m == null) {
          break;
        }
        long tag = m.getEnvelope().getDeliveryTag();
        String mid = m.getProps().getMessageId();
        DeadLetterRecord r;
        try {
          r = DeadLetterRecord.fromJson(new String(m.getBody(), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException e) {
          throw new RabbitRuntimeException("rabbitmq: dlq: record " + mid + " in " + dlq
              + " is not a JSON dlq.Record: " + e.getMessage(), e);
        }
        if (r.id().isEmpty() && mid != null) {
          r = r.withId(mid);
        }
        recs.add(new Stored(r, tag));
      }
      recs.sort(Comparator.comparing(s -> s.rec().id()));
      RuntimeException failed = null;
      Acks acks = new Acks(ch);
      try {
        fn.run(acks, recs);
      } catch (RuntimeException e) {
        failed = e;
      }
      // basic.nack(multiple) names the highest record not removed: the
      // broker refuses a tag that is settled already (406).
      long handBack = 0;
      for (Stored s : recs) {
        if (!acks.acked.contains(s.tag())) {
          handBack = Math.max(handBack, s.tag());
        }
      }
      if (handBack > 0) {
        try {
          ch.basicNack(handBack, true, true);
        } catch (IOException | AlreadyClosedException e) {
          if (failed == null) {
            failed = new RabbitRuntimeException("rabbitmq: dlq: hand back the records of " + dlq + ": " + e, e);
          }
        }
      }
      if (failed != null) {
        throw failed;
      }
    } catch (IOException | ShutdownSignalException e) {
      throw new RabbitRuntimeException("rabbitmq: dlq: read " + dlq + ": " + e.getMessage(), e);
    } finally {
      try {
        if (ch.isOpen()) {
          ch.close(); // hands back whatever is still unacknowledged
        }
      } catch (IOException | TimeoutException | AlreadyClosedException e) {
        // the broker requeues it all the same
      }
    }
  }

  /** Returns the matching records, oldest first; the queue is read whole and handed back. */
  public List<DeadLetterRecord> list(Filter f) {
    int limit = f.limit() > 0 ? f.limit() : DEFAULT_LIMIT;
    List<DeadLetterRecord> out = new ArrayList<>();
    scan((ch, recs) -> {
      for (Stored s : recs) {
        if (out.size() >= limit) {
          break;
        }
        if (f.matches(s.rec())) {
          out.add(s.rec());
        }
      }
    });
    return out;
  }

  /**
   * Returns the record with id.
   *
   * @throws NotFoundException when there is none
   */
  public DeadLetterRecord get(String id) {
    DeadLetterRecord[] found = new DeadLetterRecord[1];
    scan((ch, recs) -> recs.stream().filter(s -> s.rec().id().equals(id)).forEach(s -> found[0] = s.rec()));
    if (found[0] == null) {
      throw new NotFoundException("dlq: no record \"" + id + "\" in " + pub.topology().dlq());
    }
    return found[0];
  }

  /**
   * Replays the record: its envelope with retry_count and not_before reset
   * and replay_count + 1, to its group's queue only (P.retry, key P/G/T)
   * under a fresh message_id; then the record is stored again with
   * replay_count + 1 and last_replayed_at under a new id; then the old one is
   * removed. A crash in between leaves a duplicate, never a loss.
   *
   * @throws NotFoundException when there is no record id
   * @throws RabbitRuntimeException when the envelope does not decode or a publish failed
   */
  public void replay(String id) {
    scan((ch, recs) -> {
      Stored s = recs.stream().filter(x -> x.rec().id().equals(id)).findFirst()
          .orElseThrow(() -> new NotFoundException("dlq: no record \"" + id + "\" in " + pub.topology().dlq()));
      DeadLetterRecord r = s.rec();
      String bad = RabbitConfig.checkGroup(r.group());
      if (bad != null) {
        throw new RabbitRuntimeException("rabbitmq: replay " + id + ": " + bad, null);
      }
      Envelope env;
      try {
        env = Envelopes.decode(r.envelope() == null ? new byte[0] : r.envelope());
      } catch (DecodeException e) {
        throw new RabbitRuntimeException("dlq replay " + id
            + ": the envelope does not decode, fix the producer and purge it: " + e.getMessage(), e);
      }
      byte[] body = Envelopes.encode(env.toBuilder().setRetryCount(0).setNotBefore(0)
          .setReplayCount(env.getReplayCount() + 1).build());
      pub.declareGroup(r.group(), r.topic());
      String q = pub.topology().queue(r.group(), r.topic());
      pub.await(pub.publishToGroup(r.group(), r.topic(), body, RabbitPublisher.newMessageId(), 0),
          pub.topology().retryExchange(), q);
      DeadLetterRecord again = r.replayed(Instant.ofEpochMilli(pub.now()))
          .withId(RabbitPublisher.newRecordId(pub.now()));
      pub.await(pub.storeRecord(again), "", pub.topology().dlq());
      ch.ack(s.tag());
    });
  }

  /** Removes the matching records (the filter's limit does not apply) and returns how many. */
  public int purge(Filter f) {
    int[] n = new int[1];
    scan((ch, recs) -> {
      for (Stored s : recs) {
        if (f.matches(s.rec())) {
          ch.ack(s.tag());
          n[0]++;
        }
      }
    });
    return n[0];
  }
}
