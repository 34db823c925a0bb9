package io.msgcontract.support;

import io.msgcontract.v1.Envelope;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The database part of a broker loop's ready deliveries, one per biz_key, as
 * runtime-go's consumer runs a fetch: one delivery alone in a transaction of
 * its own ({@link Consumer#process}), several in one shared transaction, each
 * in a savepoint ({@link Consumer#processBatch}), committed once. Before the
 * shared transaction the retry copies and replays among them are looked up in
 * their retry chains ({@link Consumer#superseded}), and a superseded one is
 * settled as a duplicate without it. After the transaction, a failed delivery
 * advances its chain ({@link Consumer.Pending#committed}), which may turn its
 * retry or dead letter into a duplicate. The RabbitMQ and RocketMQ loops
 * share it; the loop carries the decisions out.
 */
public final class TransactionBatch {
  private static final System.Logger LOG = System.getLogger(TransactionBatch.class.getName());

  private TransactionBatch() {}

  /**
   * One ready delivery.
   *
   * @param consumer the consumer its route names
   * @param env its envelope, decoded
   * @param body the bytes delivered
   * @param deliveryId its delivery id (the broker's message id), which keys its retry chain
   */
  public record Item(Consumer<?> consumer, Envelope env, byte[] body, String deliveryId) {}

  /** The decision for items[index]. */
  public record Decided(int index, Decision decision) {}

  /**
   * What a batch came to.
   *
   * @param decided the decisions to carry out, in this order (the superseded ones first)
   * @param failed the indexes of the items whose database part failed: none of their effects
   *     committed, and they run again
   */
  public record Result(List<Decided> decided, List<Integer> failed) {}

  /**
   * Runs items (distinct biz_keys) on a connection from db.
   *
   * @param db opens the connection, closed before this returns
   * @param items the ready deliveries, at least one
   */
  public static Result run(ConnectionFactory db, List<Item> items) {
    List<Decided> early = new ArrayList<>();
    List<Decided> late = new ArrayList<>(items.size());
    List<Integer> failed = new ArrayList<>();
    try (Connection c = db.open()) {
      if (items.size() == 1) {
        late.add(new Decided(0, runAlone(c, items.get(0))));
      } else {
        List<Integer> shared = new ArrayList<>(items.size());
        for (int i = 0; i < items.size(); i++) {
          Item it = items.get(i);
          Decision d = it.consumer().superseded(c, it.env(), it.deliveryId());
          if (d == null) {
            shared.add(i);
          } else {
            early.add(new Decided(i, d));
          }
        }
        if (!shared.isEmpty()) {
          List<Consumer.Pending> pend = Consumer.processBatch(c, shared.stream()
              .map(i -> new Consumer.BatchItem(items.get(i).consumer(), items.get(i).body(), items.get(i).deliveryId()))
              .toList());
          for (int k = 0; k < shared.size(); k++) {
            int i = shared.get(k);
            try {
              late.add(new Decided(i, pend.get(k).committed()));
            } catch (SQLException x) {
              LOG.log(Level.WARNING, "msgcontract: database failure, message handed back: step=advance retry chain"
                  + " transport_id=" + items.get(i).deliveryId() + " error=" + x);
              failed.add(i);
            }
          }
        }
      }
    } catch (SQLException x) {
      LOG.log(Level.WARNING, "msgcontract: database failed; " + (items.size() == 1 ? "the delivery runs"
          : "the " + items.size() + " deliveries of the transaction run") + " again: " + x);
      late.clear();
      failed.clear();
      for (int i = 0; i < items.size(); i++) {
        int idx = i;
        if (early.stream().noneMatch(d -> d.index() == idx)) {
          failed.add(i);
        }
      }
    }
    early.addAll(late);
    return new Result(early, failed);
  }

  /**
   * Takes a loop's due entries as runtime-go's consumer takes a fetch: each eligible one (still held and
   * due) through prepare, the steps before the database, which settles or defers it (null) or returns its
   * biz_key when it is ready; the ready ones go to run batchSize at a time, one per biz_key (an entry whose
   * key is in the batch already waits for the loop's next turn). run returns false when the database failed,
   * which ends the turn; so does stop. The RabbitMQ and RocketMQ loops share it.
   */
  public static <E> void forReady(List<E> candidates, int batchSize, Predicate<E> eligible,
      Function<E, String> prepare, Predicate<List<E>> run, BooleanSupplier stop) {
    List<E> batch = new ArrayList<>();
    Set<String> keys = new HashSet<>();
    for (E e : candidates) {
      if (stop.getAsBoolean()) {
        return;
      }
      if (!eligible.test(e)) {
        continue;
      }
      String key = prepare.apply(e);
      if (key == null || !keys.add(key)) {
        continue;
      }
      batch.add(e);
      if (batch.size() >= batchSize) {
        if (!run.test(batch)) {
          return;
        }
        batch = new ArrayList<>();
        keys.clear();
      }
    }
    if (!batch.isEmpty()) {
      run.test(batch);
    }
  }

  /** Runs it in a transaction of its own on c; a failure rolls it back (SQLException). */
  private static Decision runAlone(Connection c, Item it) throws SQLException {
    c.setAutoCommit(false);
    try {
      return it.consumer().process(c, it.body(), it.deliveryId());
    } catch (SQLException | RuntimeException x) {
      // A failed commit can leave the transaction open; what close does
      // with it is the driver's choice, so it is rolled back here.
      try {
        c.rollback();
      } catch (SQLException r) {
        x.addSuppressed(r);
      }
      throw x;
    }
  }
}
