package io.msgcontract.support;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader for the registry's answers, the RabbitMQ dead-letter
 * records and the golden frames the tests read, so the runtimes need no JSON
 * library: objects become Maps, arrays Lists, numbers Doubles (or Longs when
 * integral), the rest String, Boolean or null.
 */
public final class Json {
  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  /**
   * Parses one JSON value.
   *
   * @throws IllegalArgumentException on malformed input
   */
  public static Object parse(String s) {
    Json j = new Json(s);
    Object v = j.value();
    j.ws();
    if (j.i != s.length()) {
      throw j.bad("trailing data");
    }
    return v;
  }

  private Object value() {
    ws();
    if (i >= s.length()) {
      throw bad("unexpected end");
    }
    char c = s.charAt(i);
    switch (c) {
      case '{':
        return object();
      case '[':
        return array();
      case '"':
        return string();
      case 't':
        return literal("true", Boolean.TRUE);
      case 'f':
        return literal("false", Boolean.FALSE);
      case 'n':
        return literal("null", null);
      default:
        return number();
    }
  }

  private Map<String, Object> object() {
    Map<String, Object> m = new LinkedHashMap<>();
    i++;
    ws();
    if (peek() == '}') {
      i++;
      return m;
    }
    while (true) {
      ws();
      if (peek() != '"') {
        throw bad("want a member name");
      }
      String k = string();
      ws();
      expect(':');
      m.put(k, value());
      ws();
      if (peek() == ',') {
        i++;
        continue;
      }
      expect('}');
      return m;
    }
  }

  private List<Object> array() {
    List<Object> l = new ArrayList<>();
    i++;
    ws();
    if (peek() == ']') {
      i++;
      return l;
    }
    while (true) {
      l.add(value());
      ws();
      if (peek() == ',') {
        i++;
        continue;
      }
      expect(']');
      return l;
    }
  }

  private String string() {
    i++;
    StringBuilder b = new StringBuilder();
    while (i < s.length()) {
      char c = s.charAt(i++);
      if (c == '"') {
        return b.toString();
      }
      if (c != '\\') {
        b.append(c);
        continue;
      }
      if (i >= s.length()) {
        break;
      }
      char e = s.charAt(i++);
      switch (e) {
        case 'b' -> b.append('\b');
        case 'f' -> b.append('\f');
        case 'n' -> b.append('\n');
        case 'r' -> b.append('\r');
        case 't' -> b.append('\t');
        case 'u' -> {
          if (i + 4 > s.length()) {
            throw bad("short \\u escape");
          }
          b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          i += 4;
        }
        default -> b.append(e);
      }
    }
    throw bad("unterminated string");
  }

  private Object number() {
    int start = i;
    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
      i++;
    }
    String n = s.substring(start, i);
    if (n.isEmpty()) {
      throw bad("unexpected character");
    }
    try {
      return n.matches("-?\\d+") ? (Object) Long.parseLong(n) : (Object) Double.parseDouble(n);
    } catch (NumberFormatException e) {
      throw bad("bad number " + n);
    }
  }

  private Object literal(String word, Object v) {
    if (!s.startsWith(word, i)) {
      throw bad("unexpected character");
    }
    i += word.length();
    return v;
  }

  private void ws() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
  }

  private char peek() {
    if (i >= s.length()) {
      throw bad("unexpected end");
    }
    return s.charAt(i);
  }

  private void expect(char c) {
    if (peek() != c) {
      throw bad("want '" + c + "'");
    }
    i++;
  }

  private IllegalArgumentException bad(String what) {
    return new IllegalArgumentException("json: " + what + " at offset " + i);
  }
}
