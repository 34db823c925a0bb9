package io.msgcontract.kafka;

import io.msgcontract.support.RetryableException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The consumer process RetryChainLoopTest kills between a retry's publish
 * and its offset commit: a loop whose handler always fails (retryably) and
 * which, once its first retry copy is published, creates READY and hangs
 * before the delivery is settled or its offset committed.
 *
 * <p>Arguments: NAMESPACE DB READY.
 */
public final class ChainChild {
  private ChainChild() {}

  /**
   * Runs the loop until killed.
   *
   * @param args NAMESPACE DB READY
   */
  public static void main(String[] args) throws Exception {
    KafkaConfig cfg = Fixture.config(args[0]);
    Path db = Path.of(args[1]);
    Path ready = Path.of(args[2]);
    KafkaConsumerLoop loop = new KafkaConsumerLoop(cfg, Fixture.GROUP, () -> Fixture.open(db));
    loop.register(Fixture.SPEC, Fixture.HANDLER, (tx, m, env) -> {
      throw new RetryableException(50002, "system", "still down");
    });
    loop.crashAfterRetry = id -> {
      try {
        Files.createFile(ready);
        Thread.sleep(600_000);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return false;
    };
    loop.run();
  }
}
