package io.msgcontract.support;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The values generated contract classes are built from: keys, policies, rules, machines. */
class ContractValuesTest {
  @Test
  void bizKeyEncodesValuesButNotLiterals() throws BizKeyException {
    String key = new BizKeyBuilder().literal("order_id:").string("order_id", "2025 01/01")
        .literal(":").unsigned32(-1).literal(":").bool(true).key();
    assertEquals("order_id:2025%2001%2F01:4294967295:true", key);
  }

  @Test
  void bizKeyReportsTheFirstEmptyField() {
    BizKeyException e = assertThrows(BizKeyException.class,
        () -> new BizKeyBuilder().string("a", "").fail("b").key());
    assertEquals(BizKeyException.Code.EMPTY_FIELD, e.code());
    assertEquals("a", e.field());
  }

  @Test
  void bizKeyLimitCountsEncodedBytes() {
    BizKeyException e = assertThrows(BizKeyException.class,
        () -> new BizKeyBuilder().string("f", " ".repeat(171)).key());
    assertEquals(BizKeyException.Code.KEY_TOO_LONG, e.code());
    assertEquals(513, e.length());
  }

  @Test
  void retryPolicyDoublesUpToTheCapAndDeadLettersAfterMaxRetries() {
    RetryPolicy p = new RetryPolicy(1000, 2.0, 1000, 5000, 3);
    assertEquals(1000, p.baseDelay(1));
    assertEquals(4000, p.baseDelay(3));
    assertEquals(5000, p.baseDelay(4));
    assertEquals(4999, p.delayMs(3, 0.9999));
    assertFalse(p.deadLetter(3));
    assertTrue(p.deadLetter(4));
  }

  @Test
  void errorRulesClassifyByRangeThenUnclassified() {
    ErrorRules rules = new ErrorRules(List.of(
        new ErrorRange(40000, 49999, false, "business"),
        new ErrorRange(50000, 59999, true, "system")), true);
    assertEquals(new Classification(false, "business"), rules.classify(40000));
    assertEquals(new Classification(true, "system"), rules.classify(59999));
    assertEquals(new Classification(true, ""), rules.classify(1));
    assertEquals(new Classification(true, ""), rules.classify(new IllegalStateException("x")));
    assertInstanceOf(NonRetryableException.class, rules.error(40001, "closed"));
    assertInstanceOf(RetryableException.class, rules.error(50301, "down"));
  }

  @Test
  void stateMachineAnswersEveryOutcome() {
    StateMachine m = new StateMachine("shop.OrderState", Map.of(
        "PAYING", List.of(), "PAID", List.of("PAYING"), "REFUNDED", List.of("PAID")));
    assertEquals(Transit.ALLOWED, m.canTransit("PAYING", "PAID"));
    assertEquals(Transit.DUPLICATE, m.canTransit("PAID", "PAID"));
    assertEquals(Transit.ILLEGAL, m.canTransit("PAYING", "REFUNDED"));
    assertEquals(Transit.ILLEGAL, m.canTransit("NOPE", "PAID"));
  }

  @Test
  void versionAcceptsItsOwnLevelAndNamesTheFixForNewerCode() {
    assertDoesNotThrow(() -> Version.require(Version.API, ContractValuesTest.class));
    IllegalStateException e = assertThrows(IllegalStateException.class,
        () -> Version.require(Version.API + 1, ContractValuesTest.class));
    assertTrue(e.getMessage().contains(ContractValuesTest.class.getName()), e.getMessage());
    assertTrue(e.getMessage().contains("upgrade"), e.getMessage());
  }
}
