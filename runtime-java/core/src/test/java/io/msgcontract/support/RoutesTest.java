package io.msgcontract.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import com.google.protobuf.ByteString;
import io.msgcontract.v1.Envelope;
import io.msgcontract.v1.LastError;
import org.junit.jupiter.api.Test;

/**
 * Routes.prepare, the steps of a broker loop's delivery before the database:
 * each outcome, and the same outcome whether the loop hands over the body or
 * the envelope it decoded already (the RocketMQ FIFO loop reads the biz_key
 * first).
 */
class RoutesTest {
  private static final EventSpec<LastError> SPEC = ConsumerTest.SPEC;
  static final long NOW = 1_000_000L;

  private static Routes routes(Consumer<LastError> c) {
    Routes r = new Routes("rocketmq");
    r.add(SPEC, "h", c);
    return r;
  }

  private static Envelope envelope(long notBefore) throws BizKeyException {
    return Envelopes.newEnvelope(SPEC, LastError.newBuilder().setRange("a").build(), 1).toBuilder()
        .setNotBefore(notBefore).build();
  }

  /** prepare from the body and from the decoded envelope, which must agree. */
  private static Routes.Prepared both(Routes r, String topic, Envelope env) throws Exception {
    Routes.Prepared fromBody = r.prepare(topic, Envelopes.encode(env), "g", NOW);
    Routes.Prepared fromEnv = r.prepare(topic, Envelopes.decode(Envelopes.encode(env)), "g", NOW);
    assertEquals(fromBody, fromEnv, "prepare from the body and from its envelope");
    return fromEnv;
  }

  @Test
  void readyCarriesTheRouteAndTheEnvelope() throws Exception {
    Consumer<LastError> c = new Consumer<>(SPEC, "h", (tx, m, e) -> { });
    Routes r = routes(c);
    Envelope env = envelope(0);
    Routes.Ready ready = assertInstanceOf(Routes.Ready.class, both(r, "errors", env));
    assertSame(c, ready.route().consumer());
    assertEquals("h", ready.route().handlerName());
    assertEquals(env, ready.env());
  }

  @Test
  void aDeliveryOnAnotherTopicIsRoutedByTheEnvelopesTopic() throws Exception {
    Routes r = routes(new Consumer<>(SPEC, "h", (tx, m, e) -> { }));
    // A retry copy comes on the group's retry topic; its envelope names the event's.
    assertInstanceOf(Routes.Ready.class, both(r, "g_retry", envelope(0)));
  }

  @Test
  void notDueBeforeItsNotBefore() throws Exception {
    Routes r = routes(new Consumer<>(SPEC, "h", (tx, m, e) -> { }));
    Routes.NotDue n = assertInstanceOf(Routes.NotDue.class, both(r, "errors", envelope(NOW + 1)));
    assertEquals(NOW + 1, n.notBeforeMs());
    assertInstanceOf(Routes.Ready.class, both(r, "errors", envelope(NOW)));
  }

  private static void assertDead(Routes.Prepared p, String reason, int code, String handler) {
    Routes.Dead d = assertInstanceOf(Routes.Dead.class, p);
    assertEquals(reason, d.reason());
    assertEquals(code, d.code());
    assertEquals(handler, d.handler());
  }

  @Test
  void noHandlerIsDeadLettered() throws Exception {
    Routes r = routes(new Consumer<>(SPEC, "h", (tx, m, e) -> { }));
    Envelope env = envelope(0).toBuilder().setEventType("OTHER").build();
    assertDead(both(r, "errors", env), "no_handler", Routes.CODE_NO_HANDLER, "");
  }

  @Test
  void aPayloadThatDoesNotDecodeIsDeadLetteredWithItsHandler() throws Exception {
    Routes r = routes(new Consumer<>(SPEC, "h", (tx, m, e) -> { }));
    Envelope env = envelope(0).toBuilder().setPayload(ByteString.copyFrom(new byte[] {(byte) 0xff})).build();
    assertDead(both(r, "errors", env), "decode", Consumer.CODE_DECODE, "h");
  }

  @Test
  void aBodyThatIsNoEnvelopeIsDeadLetteredAsUndecodable() throws Exception {
    Routes r = routes(new Consumer<>(SPEC, "h", (tx, m, e) -> { }));
    byte[] junk = {(byte) 0xff, (byte) 0xff};
    Routes.Prepared p = r.prepare("errors", junk, "g", NOW);
    assertDead(p, "decode", Consumer.CODE_DECODE, "");
    assertNull(((Routes.Dead) p).env());
    DecodeException x = null;
    try {
      Envelopes.decode(junk);
    } catch (DecodeException e) {
      x = e;
    }
    assertEquals(p, Routes.undecodable(x), "what a loop that decoded the body itself reports");
  }
}
