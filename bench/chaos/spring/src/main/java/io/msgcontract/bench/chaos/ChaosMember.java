package io.msgcontract.bench.chaos;

import com.google.protobuf.StringValue;
import io.msgcontract.spring.kafka.ContractListener;
import io.msgcontract.support.ContractException;
import io.msgcontract.support.ErrorRange;
import io.msgcontract.support.ErrorRules;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.v1.Envelope;
import java.net.URI;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import sun.misc.Signal;

/**
 * A Spring member of the chaos run's Kafka group: what runtime-go/bench/chaos/child.go's
 * handler does, as a {@link ContractListener} writing the effect with a JdbcTemplate in the
 * delivery's transaction. SIGTERM is a graceful stop (the context closes: the container commits
 * what is settled and leaves the group) ending with exit status 0, as the parent expects.
 */
@SpringBootApplication
public class ChaosMember {
  /** The bench contract of runtime-go/bench/internal/benchmsg, as generated Java declares an event. */
  public static final class Bench {
    /** The event. */
    public static final EventSpec<StringValue> SPEC = new EventSpec<>("google.protobuf.StringValue", "bench",
        "BENCH", "{value}", new RetryPolicy(50, 2, 50, 1000, 4),
        new ErrorRules(List.of(new ErrorRange(40000, 49999, false, "business"),
            new ErrorRange(50000, 59999, true, "system")), true),
        "", StringValue.getDefaultInstance(), StringValue::getValue);

    private Bench() {}
  }

  static final int CODE_BUSINESS = 40001;
  static final int CODE_SYSTEM = 50001;

  /** The handler, named as the Go members' so that they share claims. */
  @Component
  static class Effects {
    private final JdbcTemplate jdbc;
    private final String note = "spring-p" + System.getenv("CHAOS_ID");
    private final long delayMs = Long.parseLong(System.getenv().getOrDefault("CHAOS_HANDLER_DELAY_MS", "0"));

    Effects(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @ContractListener(spec = Bench.class, handler = "bench-handler")
    void on(StringValue m, Envelope env) throws ContractException, InterruptedException {
      String kind = m.getValue();
      switch (kind) {
        case "poison-code" -> throw Bench.SPEC.rules().error(CODE_BUSINESS, "poison");
        case "exhausted" -> throw Bench.SPEC.rules().error(CODE_SYSTEM, "never recovers");
        case "transient-1", "transient-2" -> {
          if (env.getRetryCount() < (kind.equals("transient-1") ? 1 : 2)) {
            throw Bench.SPEC.rules().error(CODE_SYSTEM, "transient");
          }
        }
        default -> { }
      }
      jdbc.update("INSERT INTO effects (biz_key, note) VALUES (?, ?)", env.getBizKey(), note);
      if (delayMs > 0) {
        Thread.sleep(delayMs);
      }
    }
  }

  /**
   * Starts the member.
   *
   * @param args unused
   */
  public static void main(String[] args) {
    AtomicReference<ConfigurableApplicationContext> ctx = new AtomicReference<>();
    Signal.handle(new Signal("TERM"), s -> {
      ConfigurableApplicationContext c = ctx.get();
      if (c != null) {
        c.close();
      }
      System.exit(0);
    });
    // CHAOS_PG_URL is a postgres:// URL; the driver wants jdbc:postgresql:// and the schema.
    URI pg = URI.create(System.getenv("CHAOS_PG_URL"));
    String[] user = pg.getUserInfo() == null ? new String[] {""} : pg.getUserInfo().split(":", 2);
    System.setProperty("spring.datasource.url", "jdbc:postgresql://" + pg.getHost() + ":" + pg.getPort()
        + pg.getPath() + "?currentSchema=" + System.getenv("CHAOS_PG_SCHEMA"));
    System.setProperty("spring.datasource.username", user[0]);
    System.setProperty("spring.datasource.password", user.length > 1 ? user[1] : "");
    ctx.set(SpringApplication.run(ChaosMember.class, args));
  }
}
