// The Java side of integration/obsscrape: the scenario every language runs
// (handled, duplicate, a retry then handled, an envelope that does not
// decode) on runtime-java/core's Consumer with io.msgcontract.observe, then
// /metrics on an ephemeral loopback port, printed as "port N", until stdin
// closes. Run as a single-file source program on runtime-java/core's classpath.
import io.msgcontract.observe.JsonLog;
import io.msgcontract.observe.PrometheusMetrics;
import io.msgcontract.support.BizKeyBuilder;
import io.msgcontract.support.Consumer;
import io.msgcontract.support.Decision;
import io.msgcontract.support.DedupStore;
import io.msgcontract.support.Envelopes;
import io.msgcontract.support.ErrorRange;
import io.msgcontract.support.ErrorRules;
import io.msgcontract.support.EventSpec;
import io.msgcontract.support.RetryPolicy;
import io.msgcontract.v1.Envelope;
import io.msgcontract.v1.LastError;
import io.msgcontract.v1.TraceContext;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.List;

public class ObsMain {
  static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

  public static void main(String[] args) throws Exception {
    EventSpec<LastError> spec = new EventSpec<>("msgcontract.v1.LastError", "obs", "OBS_EVENT", "range:{range}",
        new RetryPolicy(1000, 2.0, 0, 60000, 1),
        new ErrorRules(List.of(new ErrorRange(50000, 59999, true, "system")), false),
        "", LastError.getDefaultInstance(),
        m -> new BizKeyBuilder().literal("range:").string("range", m.getRange()).key());
    PrometheusRegistry reg = new PrometheusRegistry();
    PrometheusMetrics metrics = new PrometheusMetrics(reg);
    JsonLog log = new JsonLog(System.err::println);
    Consumer<LastError> c = new Consumer<LastError>(spec, "obs", (tx, m, env) -> {
      if (m.getRange().equals("b") && env.getRetryCount() == 0) {
        throw spec.rules().error(50301, "ledger down");
      }
    }).withObserver(o -> {
      metrics.observe(o);
      log.observe(o);
    });
    try (Connection conn = DriverManager.getConnection("jdbc:sqlite::memory:")) {
      DedupStore.migrate(conn);
      conn.setAutoCommit(false);
      long now = System.currentTimeMillis();
      byte[] a = Envelopes.encode(Envelopes.newEnvelope(spec, LastError.newBuilder().setRange("a").build(), now));
      c.process(conn, a);
      c.process(conn, a);
      Envelope b = Envelopes.newEnvelope(spec, LastError.newBuilder().setRange("b").build(), now).toBuilder()
          .setTrace(TraceContext.newBuilder().setTraceparent(TRACEPARENT)).build();
      Decision d = c.process(conn, Envelopes.encode(b));
      // The transport's part: deliver the retry when it is due.
      Envelope next = ((Decision.Retry) d).nextEnvelope();
      Thread.sleep(Math.max(0, next.getNotBefore() - System.currentTimeMillis()) + 10);
      c.process(conn, Envelopes.encode(next));
      c.process(conn, "not an envelope".getBytes(StandardCharsets.UTF_8));
    }
    HTTPServer server = HTTPServer.builder().hostname("127.0.0.1").port(0).registry(reg).buildAndStart();
    System.out.println("port " + server.getPort());
    System.out.flush();
    while (System.in.read() != -1) {
      // until the test closes stdin
    }
    server.close();
  }
}
