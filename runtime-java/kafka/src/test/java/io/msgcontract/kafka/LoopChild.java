package io.msgcontract.kafka;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.PreparedStatement;

/**
 * The consumer process the SIGKILL test kills: a loop whose handler writes
 * the effect in its transaction and then, while HANG exists, creates READY
 * and hangs before the transaction commits.
 *
 * <p>Arguments: NAMESPACE DB HANG READY.
 */
public final class LoopChild {
  private LoopChild() {}

  /**
   * Runs the loop until killed.
   *
   * @param args NAMESPACE DB HANG READY
   */
  public static void main(String[] args) throws Exception {
    KafkaConfig cfg = Fixture.config(args[0]);
    Path db = Path.of(args[1]);
    Path hang = Path.of(args[2]);
    Path ready = Path.of(args[3]);
    KafkaConsumerLoop loop = new KafkaConsumerLoop(cfg, Fixture.GROUP, () -> Fixture.open(db));
    loop.register(Fixture.SPEC, Fixture.HANDLER, (tx, m, env) -> {
      try (PreparedStatement st = tx.prepareStatement("INSERT INTO effects (biz_key, note) VALUES (?, 'child')")) {
        st.setString(1, m.getValue());
        st.executeUpdate();
      }
      if (Files.exists(hang)) {
        Files.createFile(ready);
        Thread.sleep(600_000);
      }
    });
    loop.run();
  }
}
