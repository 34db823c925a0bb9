package io.msgcontract.support;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class JsonStringsTest {
  @Test
  void escapesQuotesBackslashesAndControlCharacters() {
    StringBuilder b = new StringBuilder("x=");
    assertEquals("x=\"a\\\"b\\\\c\\nd\\te\\u0001ü\"", JsonStrings.quote(b, "a\"b\\c\nd\te\u0001ü").toString());
  }
}
